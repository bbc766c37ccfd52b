"""`meshnet-node jobs run | login | logout` — run batch jobs from a tracker when not serving.

``run`` reuses the session credential saved for the tracker's URL (OS keyring,
or the 0600 file of ``--credentials-file``) until the tracker refuses it as
expired or unknown; only then, or when none is saved, does it register this
node as an executor again (signed with the node key, and with the join token
this node serves with, which a private tracker requires). It runs the pull loop
of ``core.jobs.loop`` until stopped, ``--once`` task, ``--max-tasks`` accepted,
or ``--idle-exit`` seconds without work. Log lines on stderr are JSON, their
``text`` saying what happened. Stdin is read only with ``--control stdin`` (the
app's flag): then ``stop`` or the end of stdin ends the executor, and its last
log line says which.

``login`` is the manual-token form: it saves a session credential the operator
was handed for a tracker, keyed by the tracker's normalised URL, in the same
store ``run`` reads.
"""

from __future__ import annotations

import argparse
import getpass
import json
import logging
import signal
import sys
import threading
import time
from pathlib import Path
from types import FrameType

from app.cli import arguments
from app.cli.node_control import (
    STDIN_ENDED,
    STDIN_ENDED_WHY,
    CommandQueue,
    add_control_argument,
    stdin_controls,
)
from app.cli.node_identity import add_identity_arguments
from core.errors import KeyringFailed
from core.identity.keystore import load_or_create_identity
from core.jobs.archives import DEFAULT_MAX_BYTES, DEFAULT_MAX_MEMBERS
from core.jobs.client import JobsClient
from core.jobs.credentials import CredentialStore, normalize
from core.jobs.loop import ExecutorLoop
from core.jobs.runner import DEFAULT_TIMEOUT_S, SubprocessRunner
from core.network.node_network import network_to_serve


class JsonLines(logging.Formatter):
    """One JSON object per line: time, level, logger, and the event's own fields."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        try:
            fields = json.loads(message)
            if not isinstance(fields, dict):
                fields = {"text": message}
        except ValueError:
            fields = {"text": message}
        return json.dumps(
            {
                "ts": round(record.created, 3),
                "level": record.levelname.lower(),
                "logger": record.name,
                **fields,
            },
            default=str,
        )


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    jobs = subparsers.add_parser("jobs", help="run batch jobs from a tracker")
    verbs = jobs.add_subparsers(dest="jobs_command", required=True)
    run = verbs.add_parser("run", help="claim and run batch tasks until stopped")
    run.add_argument("--tracker", required=True, help="tracker URL, e.g. http://host:8765")
    run.add_argument("--once", action="store_true", help="run at most one task, then exit")
    run.add_argument("--max-tasks", type=int, default=None, help="exit after N accepted tasks")
    run.add_argument(
        "--idle-exit", type=float, default=None, metavar="S", help="exit after S s with no work"
    )
    run.add_argument("--workdir", type=Path, default=None, help="where task folders are made")
    run.add_argument("--poll", type=float, default=1.0, help="seconds between empty claims")
    run.add_argument(
        "--task-timeout", type=float, default=DEFAULT_TIMEOUT_S, help="longest task (s)"
    )
    run.add_argument(
        "--max-unpacked-mb",
        type=int,
        default=DEFAULT_MAX_BYTES >> 20,
        help="most bytes one task's archives may unpack to (MB; the host's ceiling)",
    )
    run.add_argument(
        "--max-unpacked-members",
        type=int,
        default=DEFAULT_MAX_MEMBERS,
        help="most files one archive input may hold",
    )
    _credential_arguments(run)
    arguments.add_ca_file_argument(run)
    add_control_argument(run)
    add_identity_arguments(run)
    run.set_defaults(func=run_jobs)
    login = verbs.add_parser("login", help="save a session credential for a tracker (manual token)")
    login.add_argument("--tracker", required=True, type=arguments.tracker_url)
    login.add_argument("--token", default=None, help="the credential (asked for when omitted)")
    _credential_arguments(login)
    login.set_defaults(func=login_jobs)
    logout = verbs.add_parser("logout", help="forget the session credential for a tracker")
    logout.add_argument("--tracker", required=True)
    _credential_arguments(logout)
    logout.set_defaults(func=logout_jobs)


def _credential_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--credentials-file",
        type=Path,
        default=None,
        metavar="PATH",
        help="keep session credentials in this 0600 JSON file instead of the OS keyring",
    )


def _install_json_logging() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLines())
    for name in ("meshnet.jobs", "core.jobs"):
        logger = logging.getLogger(name)
        logger.handlers = [handler]
        logger.setLevel(logging.INFO)
        logger.propagate = False


def run_jobs(args: argparse.Namespace) -> int:
    _install_json_logging()
    identity = load_or_create_identity(args.profile, args.identity_file)
    client = JobsClient(
        args.tracker,
        identity,
        credentials=CredentialStore(args.credentials_file),
        ca_file=args.ca_file,
        # The join token this node serves with (joined network, or `meshnet-node login`).
        join_token=network_to_serve(args.profile, args.tracker).join_token,
    )
    loop = ExecutorLoop(
        client,
        SubprocessRunner(timeout_seconds=args.task_timeout),
        poll_seconds=args.poll,
        workdir_base=args.workdir,
        max_unpacked_bytes=args.max_unpacked_mb << 20,
        max_unpacked_members=args.max_unpacked_members,
    )

    def stop(_signum: int, _frame: FrameType | None) -> None:
        loop.stop_event.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    log = logging.getLogger("meshnet.jobs")
    if stdin_controls(args):
        _stop_on_stdin(loop.stop_event, log)
    if client.has_session:
        # Reused until the tracker refuses it; the client registers again then.
        log.info(json.dumps({"text": "reusing the saved session credential"}))
    elif not _register_until_stopped(client, loop.stop_event, log):
        return 0
    log.info(
        json.dumps(
            {"text": "executor started", "node": identity.node_id, "tracker": client.base_url}
        )
    )
    started = time.monotonic()
    accepted = loop.run(max_tasks=args.max_tasks, once=args.once, idle_exit_s=args.idle_exit)
    log.info(
        json.dumps(
            {
                "text": "executor stopped",
                "accepted": accepted,
                "tasks_run": loop.tasks_run,
                "seconds": round(time.monotonic() - started, 1),
            }
        )
    )
    client.close()
    return 0


def _register_until_stopped(
    client: JobsClient, stop_event: threading.Event, log: logging.Logger
) -> bool:
    """The first registration retries like any outage; False when stopped meanwhile."""
    backoff = 1.0
    while not stop_event.is_set():
        try:
            client.register()
            return True
        except Exception as exc:
            log.warning(json.dumps({"text": "registration failed", "error": str(exc)}))
            if stop_event.wait(backoff):
                return False
            backoff = min(backoff * 2, 30.0)
    return False


def _stop_on_stdin(stop_event: threading.Event, log: logging.Logger) -> None:
    """``--control stdin``: a ``stop`` line or the end of stdin ends the executor."""
    commands = CommandQueue()
    commands.read_stdin(sys.stdin)

    def watch() -> None:
        while True:
            command = commands.get(3600.0)
            if command == STDIN_ENDED:
                log.warning(json.dumps({"text": "stopping", "why": STDIN_ENDED_WHY}))
            elif command == "stop":
                log.info(json.dumps({"text": "stopping", "why": "a stop command on stdin"}))
            else:
                continue
            stop_event.set()
            return

    threading.Thread(target=watch, name="meshnet-jobs-stdin", daemon=True).start()


def login_jobs(args: argparse.Namespace) -> int:
    """Save a manual session credential for ``--tracker`` (keyring, or the named file)."""
    try:
        token = args.token if args.token is not None else getpass.getpass("Session token: ")
    except EOFError:  # no terminal and nothing on stdin: say so, not a traceback
        print(
            "meshnet-node: no session token was given; pass --token or type it when asked "
            "[bad-config]",
            file=sys.stderr,
        )
        return 2
    token = token.strip()
    if not token:
        print(
            "meshnet-node: an empty session token was given; nothing saved [bad-config]",
            file=sys.stderr,
        )
        return 2
    store = CredentialStore(args.credentials_file)
    store.save(args.tracker, token)
    print(f"saved the session credential for {normalize(args.tracker)} ({store.describe()})")
    return 0


def logout_jobs(args: argparse.Namespace) -> int:
    store = CredentialStore(args.credentials_file)
    try:
        forgotten = store.clear(args.tracker)
    except KeyringFailed as exc:
        print(f"meshnet-node: {exc} [{exc.reason}]", file=sys.stderr)
        return 1
    if forgotten:
        print(f"forgot the session credential for {args.tracker} ({store.describe()})")
    else:
        print(f"no session credential was saved for {args.tracker} ({store.describe()})")
    return 0
