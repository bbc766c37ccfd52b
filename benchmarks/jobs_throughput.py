"""Batch-job throughput: trivial tasks per second through a real tracker and executors.

Starts a real tracker on loopback (SQLite), submits ``--tasks`` trivial
``selftest`` tasks (no sleep: the cost is the queue, the transfers and one
workload subprocess per task), and runs ``--executors`` real
``meshnet-node jobs run`` processes until the queue drains. In the same run the
reference: the same job drained by a single executor. Figures come from the
tracker's own task rows: throughput = tasks / (last commit − first claim);
claim-to-commit latency per task = its commit time − its claim time.

    python benchmarks/jobs_throughput.py [--tasks 60] [--executors 4]

Prints ours (N executors) and the reference's (1 executor), then
``ratio: R`` = our tasks/s over the reference's (how the queue scales out).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.tracker_service.server_process import TrackerProcess  # noqa: E402
from tracker_service.store.db import Database  # noqa: E402
from tracker_service.store.job_tables import JobTask  # noqa: E402
from tracker_service.store.submitters import add_submitter_token  # noqa: E402


@dataclass
class Figures:
    executors: int
    tasks: int
    tasks_per_s: float
    p50_ms: float
    p99_ms: float


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def run_once(root: Path, tasks: int, executors: int) -> Figures:
    home = root / f"run-{executors}"
    home.mkdir(parents=True)
    db_url = f"sqlite:///{home / 'tracker.db'}"
    database = Database(db_url)
    database.migrate()
    with database.sessions.begin() as session:
        _, token = add_submitter_token(session, label="bench", now=time.time())
    tracker = TrackerProcess(home, db_url, MESHNET_TRACKER_BACKGROUND_TASKS="false").start()
    children: list[subprocess.Popen[bytes]] = []
    try:
        response = httpx.post(
            tracker.url + "/api/v1/jobs",
            json={"workload": "selftest", "tasks": tasks, "params": {"seconds": "0"}},
            headers={"Authorization": f"Bearer {token}"},
        )
        response.raise_for_status()
        job_id = response.json()["job_id"]
        env = {**os.environ, "PYTHONPATH": str(REPO), "MESHNET_HOME": str(home)}
        for n in range(executors):
            folder = home / f"ex{n}"
            folder.mkdir()
            command = [
                sys.executable, "-m", "app.cli.node", "jobs", "run",
                "--tracker", tracker.url, "--idle-exit", "1", "--poll", "0.05",
                "--identity-file", str(folder / "node.key"),
                "--credentials-file", str(folder / "creds.json"),
                "--workdir", str(folder / "work"),
            ]  # fmt: skip
            log = (folder / "executor.log").open("wb")
            children.append(subprocess.Popen(command, cwd=REPO, env=env, stdout=log, stderr=log))
        for child in children:
            child.wait(timeout=1800)
        with database.session() as session:
            rows = session.query(JobTask).filter(JobTask.job_id == job_id).all()
            done = [(r.claimed_at, r.finished_at) for r in rows if r.state == "succeeded"]
        if len(done) != tasks:
            raise SystemExit(f"only {len(done)} of {tasks} tasks succeeded; see {home}")
        first = min(c for c, _ in done if c is not None)
        last = max(f for _, f in done if f is not None)
        latencies = [(f - c) * 1000.0 for c, f in done if c is not None and f is not None]
        return Figures(
            executors=executors,
            tasks=tasks,
            tasks_per_s=tasks / (last - first),
            p50_ms=statistics.median(latencies),
            p99_ms=_percentile(latencies, 0.99),
        )
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()
        tracker.stop()
        database.dispose()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=60)
    parser.add_argument("--executors", type=int, default=4)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="jobs-bench-") as tmp:
        ours = run_once(Path(tmp), args.tasks, args.executors)
        reference = run_once(Path(tmp), args.tasks, 1)
    for label, f in (("ours", ours), ("reference", reference)):
        print(
            f"{label}: {f.executors} executor(s), {f.tasks} trivial tasks: "
            f"{f.tasks_per_s:.2f} tasks/s, claim-to-commit p50 {f.p50_ms:.0f} ms, "
            f"p99 {f.p99_ms:.0f} ms"
        )
    if args.json:
        print(json.dumps({"ours": ours.__dict__, "reference": reference.__dict__}))
    print(f"ratio: {ours.tasks_per_s / reference.tasks_per_s:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
