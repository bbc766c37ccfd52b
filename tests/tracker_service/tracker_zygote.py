"""Real tracker processes, started fast: import once, fork one child per life.

    python -m tests.tracker_service.tracker_zygote

The kill -9 test starts the tracker fifty times; importing FastAPI, SQLAlchemy
and the rest costs seconds a start on a busy two-core machine, the start itself
a fraction of that. This process imports ``tracker_service`` once and, per
request, forks a child that runs ``meshnet-tracker`` exactly as the console
script does (``tracker_service.cli.main``): the child opens the database,
migrates, loads the key, serves on its own port, and dies by the test's
SIGKILL. The zygote itself never opens a database or starts a thread, so a
child starts with nothing shared but imported code.

Requests and answers are JSON lines on stdin/stdout:
``{"op": "start", "argv": [...], "log": PATH}`` -> ``{"pid": N}`` (the child runs in the
background); ``{"op": "reap", "pid": N}`` -> ``{"signal": S, "code": C}``;
``{"op": "run", "argv": [...], "log": PATH}`` -> ``{"code": C}`` (waits for it).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import uvicorn

import tracker_service.app
import tracker_service.cli

# Imported for the children: each would otherwise import them again after the fork.
PRELOADED = (tracker_service.app, uvicorn)


def _preload_server() -> None:
    """What uvicorn imports lazily when it starts (protocols, loop, lifespan)."""
    config = uvicorn.Config(app=lambda *_: None, log_level="warning")
    config.load()


def _child(argv: list[str], log: str) -> None:
    """Runs in the forked child; never returns."""
    code = 70
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the child's own stdio
        sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
        code = tracker_service.cli.main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _answer(reply: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()


def main() -> None:
    _preload_server()
    _answer({"ready": True})
    for line in sys.stdin:
        request = json.loads(line)
        op = request["op"]
        if op in ("start", "run"):
            pid = os.fork()
            if pid == 0:
                _child(list(request["argv"]), str(request["log"]))
            if op == "start":
                _answer({"pid": pid})
            else:
                _, status = os.waitpid(pid, 0)
                _answer({"code": os.waitstatus_to_exitcode(status)})
        elif op == "reap":
            _, status = os.waitpid(int(request["pid"]), 0)
            _answer(
                {
                    "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
                    "code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
                }
            )
        else:
            _answer({"error": f"unknown op {op!r}"})


if __name__ == "__main__":
    main()
