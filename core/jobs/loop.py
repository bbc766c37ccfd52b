"""The executor loop: pull batch work from a tracker and run it.

    register → [ claim → download inputs → run (lease heartbeats, checkpoint
    relay) → upload outputs → complete ] → repeat

Everything is pull: the node only makes outbound calls. While a task runs a
thread renews its lease; once the tracker answers 410 (the lease expired or the
task went to another machine) the result is thrown away: nothing is uploaded
and nothing committed. The tracker's compare-and-set completion refuses a late
result anyway; the client is polite, the server unforgiving.

Failures are reported, not raised: a task error is sent to the tracker (which
requeues the task with a backoff) and the loop goes on to the next task. A
tracker outage backs off 1 s → 30 s and resets on the next success; a refused
executor heartbeat makes the node register again. Log lines are JSON.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.errors import ArchiveError, Cancelled, LeaseLost, TaskExecutionError, TrackerRefused
from core.jobs.archives import DEFAULT_MAX_BYTES, DEFAULT_MAX_MEMBERS, extract_archive_safely
from core.jobs.client import JobsClient, Lease
from core.jobs.runner import SubprocessRunner

log = logging.getLogger("meshnet.jobs")

# An input name becomes a path under the task folder, so it must be one harmless
# segment; the payload comes from the submitter and is treated as hostile.
SAFE_INPUT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
RESUME_INPUT = "resume.json"
BACKOFF_START_S = 1.0
BACKOFF_MAX_S = 30.0
HEARTBEAT_MIN_S = 2.0


def heartbeat_interval(deadline: float, now: float) -> float:
    """Seconds between lease heartbeats: ``max(2, time left / 3)``."""
    return max(HEARTBEAT_MIN_S, (deadline - now) / 3.0)


def jlog(level: int, text: str, **fields: Any) -> None:
    log.log(level, json.dumps({"text": text, **fields}, default=str))


class _LeaseHeartbeat(threading.Thread):
    """Renews one lease until stopped; sets `lost` on 410."""

    def __init__(self, client: JobsClient, lease: Lease) -> None:
        super().__init__(daemon=True, name=f"lease-{lease.task_id[:8]}")
        self._client = client
        self._lease = lease
        self._halt = threading.Event()
        # The seed's cadence: a third of the time left on the lease, never under 2 s.
        self.interval = heartbeat_interval(lease.deadline, time.time())
        self.lost = threading.Event()

    def run(self) -> None:
        while not self._halt.wait(self.interval):
            try:
                self._client.attempt_heartbeat(self._lease.lease_id)
            except LeaseLost:
                jlog(logging.WARNING, "lease lost", task=self._lease.task_id)
                self.lost.set()
                return
            except Exception as exc:  # transient trouble: the deadline still has slack
                jlog(logging.WARNING, "lease heartbeat error", error=str(exc))

    def stop(self) -> None:
        self._halt.set()


class _CheckpointRelay(threading.Thread):
    """Ships each new ``out/ckpt/step-*.json`` while the task runs: upload, register the
    part, commit a one-part manifest. A failed ship is retried on the next scan; a final
    sweep at the end ships what a dying attempt wrote last."""

    def __init__(self, client: JobsClient, lease: Lease, ckpt_dir: Path, prefix: str) -> None:
        super().__init__(daemon=True, name=f"ckpt-{lease.task_id[:8]}")
        self._client = client
        self._lease = lease
        self._dir = ckpt_dir
        self._prefix = prefix
        self._halt = threading.Event()
        self.shipped: set[str] = set()

    def run(self) -> None:
        while not self._halt.wait(0.3):
            self.ship_new()

    def finish(self) -> None:
        self._halt.set()
        self.join(timeout=10)
        self.ship_new()

    def ship_new(self) -> None:
        if not self._dir.is_dir():
            return
        for path in sorted(self._dir.glob("step-*.json")):
            if path.name in self.shipped or path.is_symlink():
                continue
            try:
                step = int(path.stem.split("-", 1)[1])
            except ValueError:
                continue
            try:
                key = f"{self._prefix}ckpt/{path.name}"
                sha = self._client.upload_artifact(path, key, self._lease.lease_id)
                part = {"key": key, "sha256": sha, "size_bytes": path.stat().st_size}
                self._client.checkpoint_register_part(self._lease.lease_id, step, part)
                self._client.checkpoint_commit(
                    self._lease.lease_id, step, [part], f"artifact://{self._prefix}ckpt/{step}/"
                )
                self.shipped.add(path.name)
                jlog(logging.INFO, "checkpoint shipped", task=self._lease.task_id, step=step)
            except LeaseLost:
                self._halt.set()
                return
            except Exception as exc:  # best effort: an older resume point, not a dead run
                jlog(logging.WARNING, "checkpoint ship failed", file=path.name, error=str(exc))


class ExecutorLoop:
    def __init__(
        self,
        client: JobsClient,
        runner: SubprocessRunner | None = None,
        *,
        poll_seconds: float = 1.0,
        node_heartbeat_seconds: float = 5.0,
        workdir_base: Path | None = None,
        max_unpacked_bytes: int = DEFAULT_MAX_BYTES,
        max_unpacked_members: int = DEFAULT_MAX_MEMBERS,
        sleep: Callable[[float], bool] | None = None,
    ) -> None:
        self.client = client
        self.runner = runner or SubprocessRunner()
        self.poll_seconds = poll_seconds
        self.node_heartbeat_seconds = node_heartbeat_seconds
        self.workdir_base = workdir_base
        # The host owner's ceiling on what one task's inputs may cost; a payload cannot raise it.
        self.max_unpacked_bytes = max_unpacked_bytes
        self.max_unpacked_members = max_unpacked_members
        self.stop_event = threading.Event()
        self._sleep = sleep or self.stop_event.wait
        self.tasks_accepted = 0
        self.tasks_run = 0
        self._last_node_hb = float("-inf")

    # -- inputs --------------------------------------------------------------------

    def _stage_inputs(self, lease: Lease, workdir: Path) -> dict[str, Path]:
        payload = lease.payload
        raw_inputs = payload.get("inputs") or {}
        unpack = payload.get("unpack_inputs") or []
        if not isinstance(raw_inputs, dict):
            raise TaskExecutionError("payload 'inputs' must map input names to artifacts")
        if not isinstance(unpack, list) or not all(isinstance(n, str) for n in unpack):
            raise TaskExecutionError("payload 'unpack_inputs' must be a list of input names")
        for name in [*raw_inputs, *unpack]:
            if not SAFE_INPUT_NAME.match(str(name)) or name in (".", ".."):
                raise TaskExecutionError(
                    f"input name {name!r} is not a plain name (letters, digits, '.', '_', '-')"
                )
        unknown = sorted(set(unpack) - set(raw_inputs))
        if unknown:
            raise TaskExecutionError(f"unpack_inputs names inputs that do not exist: {unknown}")
        if payload.get("checkpoint") is not None and RESUME_INPUT in raw_inputs:
            raise TaskExecutionError(f"input {RESUME_INPUT!r} collides with the resume file")
        inputs: dict[str, Path] = {}
        for name, uri in raw_inputs.items():
            key = str(uri).removeprefix("artifact://")
            if name in unpack:
                inputs[name] = self._unpack(name, key, workdir, lease.lease_id)
            else:
                dest = workdir / "inputs" / name
                if os.path.lexists(dest):
                    raise TaskExecutionError(f"input {name!r} collides with an existing path")
                inputs[name] = self.client.download_artifact(key, dest, lease.lease_id)
        return inputs

    def _unpack(self, name: str, key: str, workdir: Path, lease_id: str) -> Path:
        """Download an archive input and unpack it to ``inputs/<name>/``: staged, then renamed
        into place in one step, so a refused archive never appears where the task looks; the
        staging folder is always removed, and the archive itself never sits under inputs/."""
        stage = workdir / ".staging" / name
        dest = workdir / "inputs" / name
        if os.path.lexists(dest):
            raise TaskExecutionError(f"input {name!r} collides with an existing path")
        try:
            stage.mkdir(parents=True)
            archive = self.client.download_artifact(key, stage / "archive.bin", lease_id)
            root = extract_archive_safely(
                archive, stage / "unpacked", self.max_unpacked_bytes, self.max_unpacked_members
            )
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(root, dest)
        except ArchiveError as exc:
            jlog(logging.WARNING, "refused unsafe input archive", input=name, error=str(exc))
            raise TaskExecutionError(f"input {name!r}: {exc}") from None
        finally:
            shutil.rmtree(stage, ignore_errors=True)
            if stage.parent.is_dir() and not any(stage.parent.iterdir()):
                stage.parent.rmdir()
        jlog(logging.INFO, "unpacked input", input=name)
        return dest

    # -- one task ------------------------------------------------------------------

    def execute_one(self, lease: Lease) -> bool:
        """Run a claimed lease end to end; True when the tracker committed its result.
        Never raises for task-level problems: they are reported to the tracker."""
        self.tasks_run += 1
        heartbeat = _LeaseHeartbeat(self.client, lease)
        heartbeat.start()
        try:
            if self.workdir_base is not None:
                self.workdir_base.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(
                prefix=f"task-{lease.task_id[:12]}-", dir=self.workdir_base
            ) as tmp:
                return self._execute_in(lease, Path(tmp), heartbeat)
        except LeaseLost:
            jlog(logging.WARNING, "lease lost; result discarded", task=lease.task_id)
            return False
        except Exception as exc:  # a task's problem, never the executor's end
            error = (
                str(exc) if isinstance(exc, TaskExecutionError) else f"{type(exc).__name__}: {exc}"
            )
            jlog(logging.WARNING, "task failed", task=lease.task_id, error=error)
            try:
                self.client.fail(lease.lease_id, error[:4000])
            except Exception as report_exc:  # the lease expires on its own: same outcome
                jlog(logging.WARNING, "could not report failure", error=str(report_exc))
            return False
        finally:
            heartbeat.stop()

    def _execute_in(self, lease: Lease, workdir: Path, heartbeat: _LeaseHeartbeat) -> bool:
        payload = lease.payload
        self.runner.module_for(payload)  # refuse an unlisted workload before any download
        inputs = self._stage_inputs(lease, workdir)
        prefix = str(payload.get("output_prefix") or f"jobs/{lease.job_id}/{lease.task_id}/")
        relay: _CheckpointRelay | None = None
        if payload.get("checkpoint") is not None:
            manifest = self.client.checkpoint_latest(lease.job_id, lease.task_id)
            if manifest and manifest.get("parts"):
                inputs["resume"] = self.client.download_artifact(
                    str(manifest["parts"][0]["key"]),
                    workdir / "inputs" / RESUME_INPUT,
                    lease.lease_id,
                )
                jlog(
                    logging.INFO,
                    "resuming from checkpoint",
                    task=lease.task_id,
                    step=manifest.get("step"),
                )
            relay = _CheckpointRelay(self.client, lease, workdir / "out" / "ckpt", prefix)
            relay.start()
        try:
            outdir = self.runner.run(payload, workdir, inputs, cancel=heartbeat.lost)
        except Cancelled:  # the runner killed the workload: its lease was lost
            raise LeaseLost("the lease was lost while the workload ran") from None
        finally:
            if relay is not None:
                relay.finish()
        if heartbeat.lost.is_set():
            jlog(logging.WARNING, "lease lost during the run; result discarded", task=lease.task_id)
            return False
        metrics_sha = ""
        real_out = os.path.realpath(outdir)
        for path in sorted(outdir.rglob("*")):
            if path.is_symlink() or not path.is_file():
                continue
            if not os.path.realpath(path).startswith(real_out + os.sep):
                continue
            rel = path.relative_to(outdir).as_posix()
            sha = self.client.upload_artifact(path, prefix + rel, lease.lease_id)
            if rel == "metrics.json":  # only the one at the output root commits
                metrics_sha = sha
            if heartbeat.lost.is_set():
                raise LeaseLost("lease lost while uploading")
        accepted = self.client.complete(lease.lease_id, metrics_sha or "0" * 64)
        if accepted:
            self.tasks_accepted += 1
        jlog(
            logging.INFO,
            "task finished",
            task=lease.task_id,
            attempt=lease.attempt_number,
            accepted=accepted,
        )
        return accepted

    # -- the loop ------------------------------------------------------------------

    def _maybe_node_heartbeat(self) -> None:
        if time.monotonic() - self._last_node_hb < self.node_heartbeat_seconds:
            return
        if not self.client.node_heartbeat():
            jlog(
                logging.INFO,
                "executor heartbeat refused; registering again",
                node=self.client.node_id,
            )
            self.client.register()
        self._last_node_hb = time.monotonic()

    def run(
        self,
        *,
        max_tasks: int | None = None,
        once: bool = False,
        idle_exit_s: float | None = None,
    ) -> int:
        """Claim and execute until stopped, `max_tasks` accepted, one task done (`once`),
        or no work for `idle_exit_s`. Returns the number of accepted tasks."""
        backoff = BACKOFF_START_S
        idle_since = time.monotonic()
        while not self.stop_event.is_set():
            if max_tasks is not None and self.tasks_accepted >= max_tasks:
                break
            try:
                self._maybe_node_heartbeat()
                lease = self.client.claim()
                backoff = BACKOFF_START_S
            except Exception as exc:
                if isinstance(exc, TrackerRefused) and exc.status_code == 403:
                    # Quarantined from jobs, or no longer admitted: retrying changes nothing.
                    jlog(logging.ERROR, "the tracker refused this executor; stopping",
                         reason=exc.reason, error=exc.detail)  # fmt: skip
                    break
                jlog(logging.WARNING, "tracker unreachable", error=str(exc), backoff_s=backoff)
                if self._sleep(backoff):
                    break
                backoff = min(backoff * 2, BACKOFF_MAX_S)
                continue
            if lease is None:
                if once or (
                    idle_exit_s is not None and time.monotonic() - idle_since >= idle_exit_s
                ):
                    break
                if self._sleep(self.poll_seconds):
                    break
                continue
            jlog(
                logging.INFO,
                "claimed",
                task=lease.task_id,
                job=lease.job_id,
                attempt=lease.attempt_number,
            )
            self.execute_one(lease)
            idle_since = time.monotonic()
            if once:
                break
        return self.tasks_accepted
