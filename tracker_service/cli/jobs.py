"""meshnet-tracker jobs submit|list|show|results and submitters add|list|revoke.

``submitters`` manages submitter tokens in the tracker's database, like
``tokens`` does join tokens. ``jobs`` talks to a running tracker over HTTP with
a submitter token (``--token`` or ``MESHNET_SUBMITTER_TOKEN``), so it works from
any machine: inputs are uploaded content-addressed (``inputs/<sha256>/<name>``)
before the job that names them is submitted.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

import httpx

from tracker_service.cli.secrets import SecretKind
from tracker_service.cli.table import table, when
from tracker_service.config import Settings
from tracker_service.errors import CliRefusal
from tracker_service.store.submitters import SUBMITTER_TOKENS

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
TOKEN_ENV = "MESHNET_SUBMITTER_TOKEN"
URL_ENV = "MESHNET_TRACKER_URL"


# -- submitter tokens (database) ---------------------------------------------------


SUBMITTERS = SecretKind(
    command="submitters",
    noun="submitter token",
    help="submitter tokens for batch jobs",
    store=SUBMITTER_TOKENS,
    empty="No submitter tokens; add one with `meshnet-tracker submitters add --label NAME`.",
    extra_columns=(("USES", lambda token: str(token.uses)),),
)


# -- jobs (HTTP) -------------------------------------------------------------------


def _client(args: argparse.Namespace) -> httpx.Client:
    token = args.token or os.environ.get(TOKEN_ENV, "")
    if not token:
        raise CliRefusal(
            f"give a submitter token with --token or {TOKEN_ENV} "
            "(the operator issues one with `meshnet-tracker submitters add`)",
            "submitter-token-missing",
        )
    url = args.tracker or os.environ.get(URL_ENV) or _default_url()
    return httpx.Client(
        base_url=url.rstrip("/"), headers={"Authorization": f"Bearer {token}"}, timeout=120.0
    )


def _default_url() -> str:
    settings = Settings()
    return f"http://{settings.host}:{settings.port}"


def _check(response: httpx.Response) -> Any:
    if response.is_success:
        return response.json() if response.content else None
    try:
        body = response.json()
        message = f"{body.get('reason')}: {body.get('detail')}"
    except ValueError:
        message = response.text[:300]
    raise CliRefusal(f"the tracker refused ({response.status_code}) {message}", "tracker-refused")


def _param(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"--param takes K=V, got {text!r}")
    return key, value


def _input(text: str) -> tuple[str, Path]:
    name, sep, raw = text.partition("=")
    path = Path(raw if sep else text)
    name = name if sep else path.name
    if not _NAME.match(name):
        raise argparse.ArgumentTypeError(
            f"input name {name!r} is not plain (letters, digits, '.', '_', '-'); use NAME=PATH"
        )
    return name, path


def _upload(client: httpx.Client, name: str, path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CliRefusal(f"cannot read input {path}: {exc}", "input-unreadable") from exc
    sha = hashlib.sha256(data).hexdigest()
    key = f"inputs/{sha}/{name}"
    _check(
        client.put(f"/api/v1/jobs/artifacts/{key}", content=data, headers={"X-Meshnet-Sha256": sha})
    )
    return key


def cmd_submit(args: argparse.Namespace) -> int:
    inputs = dict(args.input or [])
    unknown = sorted(set(args.unpack or []) - set(inputs))
    if unknown:
        raise CliRefusal(f"--unpack names no --input: {unknown}", "bad-unpack")
    with _client(args) as client:
        keys = {name: _upload(client, name, path) for name, path in inputs.items()}
        body = {
            "workload": args.workload,
            "params": dict(args.param or []),
            "inputs": keys,
            "unpack_inputs": list(args.unpack or []),
            "tasks": args.tasks,
            "checkpoint": args.checkpoint,
            "max_attempts": args.max_attempts,
            "lease_seconds": args.lease_seconds,
            "timeout_seconds": args.timeout,
        }
        created = _check(client.post("/api/v1/jobs", json=body))
    print(json.dumps({"job_id": created["job_id"]}) if args.json else created["job_id"])
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    with _client(args) as client:
        jobs = _check(client.get("/api/v1/jobs"))["jobs"]
    if args.json:
        print(json.dumps(jobs, indent=2))
        return 0
    if not jobs:
        print("No jobs; submit one with `meshnet-tracker jobs submit WORKLOAD`.")
        return 0
    rows = [
        (
            j["job_id"],
            j["workload"],
            j["state"],
            f"{j['counts'].get('succeeded', 0)}/{j['task_count']} done"
            + (f", {j['counts']['failed']} failed" if j["counts"].get("failed") else ""),
            when(j["created_at"]),
        )
        for j in jobs
    ]
    print(table(("JOB", "WORKLOAD", "STATE", "TASKS", "SUBMITTED"), rows))
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    with _client(args) as client:
        job = _check(client.get(f"/api/v1/jobs/{args.job}"))
    if args.json:
        print(json.dumps(job, indent=2))
        return 0
    print(f"job {job['job_id']}: {job['workload']} · {job['state']} · {job['task_count']} task(s)")
    rows = [
        (
            str(t["index"]),
            t["task_id"],
            t["state"],
            str(t["attempts"]),
            (t["node_id"] or "-")[:12],
            (t["error"].splitlines() or ["-"])[-1][:100],
        )
        for t in job["tasks"]
    ]
    print(table(("#", "TASK", "STATE", "ATTEMPTS", "NODE", "ERROR"), rows))
    return 0


def cmd_results(args: argparse.Namespace) -> int:
    out = Path(args.out)
    with _client(args) as client:
        job = _check(client.get(f"/api/v1/jobs/{args.job}"))
        files = 0
        for task in job["tasks"]:
            prefix = f"jobs/{job['job_id']}/{task['task_id']}/"
            folder = out / f"{task['index']:04d}-{task['task_id']}"
            for output in _agreed_outputs(task, prefix):
                rel = str(output["key"]).removeprefix(task.get("result_prefix") or prefix)
                if not all(_NAME.match(p) and p != ".." for p in rel.split("/")):
                    raise CliRefusal(
                        f"the tracker named an unsafe output path {rel!r}", "unsafe-output-path"
                    )
                response = client.get(f"/api/v1/jobs/artifacts/{output['key']}")
                _check_bytes(response, output)
                target = folder / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(response.content)
                files += 1
    failed = [t for t in job["tasks"] if t["state"] != "succeeded"]
    print(f"{files} file(s) of job {job['job_id']} ({job['state']}) written under {out}")
    if failed:
        print(f"{len(failed)} task(s) have not succeeded; see `meshnet-tracker jobs show`")
        return 1
    return 0


def _agreed_outputs(task: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """A succeeded task's outputs are those of its agreed result (docs/jobs.md#checked-work):
    the files under ``result_prefix``, without the check runs' folders; a task that has not
    succeeded yet shows everything written so far."""
    result = task.get("result_prefix")
    outputs: list[dict[str, Any]] = task["outputs"]
    if not result:
        return outputs
    keep = []
    for output in outputs:
        key = str(output["key"])
        if key.startswith(result) and not (
            result == prefix and key.removeprefix(prefix).startswith("check-")
        ):
            keep.append(output)
    return keep


def _check_bytes(response: httpx.Response, output: dict[str, Any]) -> None:
    if not response.is_success:
        _check(response)
    if hashlib.sha256(response.content).hexdigest() != output["sha256"]:
        raise CliRefusal(
            f"{output['key']} arrived corrupted (SHA-256 mismatch); try again",
            "output-corrupted",
        )


def add_jobs_commands(commands: Any) -> None:
    """Register ``jobs`` on meshnet-tracker's subcommands."""
    jobs = commands.add_parser("jobs", help="batch jobs: submit, list, show, results")
    actions = jobs.add_subparsers(dest="action", required=True)

    def remote(sub: argparse.ArgumentParser) -> argparse.ArgumentParser:
        sub.add_argument("--tracker", help=f"tracker URL (default ${URL_ENV} or host:port)")
        sub.add_argument("--token", help=f"submitter token (default ${TOKEN_ENV})")
        return sub

    submit = remote(actions.add_parser("submit", help="submit a job; prints its id"))
    submit.add_argument("workload", help="selftest, perplexity or batch_generate")
    submit.add_argument("--param", action="append", type=_param, metavar="K=V")
    submit.add_argument("--input", action="append", type=_input, metavar="[NAME=]PATH")
    submit.add_argument("--unpack", action="append", metavar="NAME", help="unpack this input")
    submit.add_argument("--tasks", type=int, default=1)
    submit.add_argument("--checkpoint", action="store_true", help="relay and resume checkpoints")
    submit.add_argument("--max-attempts", type=int, default=3)
    submit.add_argument("--lease-seconds", type=float, default=30.0)
    submit.add_argument("--timeout", type=float, default=600.0, help="wall clock per task (s)")
    submit.add_argument("--json", action="store_true", help='print {"job_id": ...}')
    submit.set_defaults(func=cmd_submit)
    listing = remote(actions.add_parser("list", help="recent jobs"))
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(func=cmd_list)
    show = remote(actions.add_parser("show", help="a job's tasks: state, attempts, node, error"))
    show.add_argument("job")
    show.add_argument("--json", action="store_true")
    show.set_defaults(func=cmd_show)
    results = remote(actions.add_parser("results", help="download a job's outputs"))
    results.add_argument("job")
    results.add_argument("--out", required=True, help="folder to write into")
    results.set_defaults(func=cmd_results)
