"""Every command answers bad arguments, unusable databases and unreachable
trackers with one sentence and a reason code: no traceback, a non-zero exit.

Tried as a new user would, each command runs as a real process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

CASES = [
    ("app.cli.node", ["doctor", "--layers", "10:5"], "bad-layers"),
    ("app.cli.node", ["doctor", "--layers", "abc"], "bad-layers"),
    ("app.cli.node", ["run", "--tracker", "notaurl", "--layers", "0:2"], "bad-tracker-url"),
    ("app.cli.meshnet", ["chat", "--tracker", "notaurl", "hi"], "bad-tracker-url"),
    # Out-of-range numbers: refused before a model loads (--port 99999 was a traceback,
    # --kv-budget-mb -5 a node that served with it).
    ("app.cli.node", ["run", "--tracker", "http://127.0.0.1:9", "--port", "99999"], "bad-config"),
    (
        "app.cli.node",
        ["run", "--tracker", "http://127.0.0.1:9", "--kv-budget-mb", "-5"],
        "bad-config",
    ),
    ("app.cli.node", ["doctor", "--memory-cap-mb", "0"], "bad-config"),
    # An unknown recipe, before the default model is imported (it was, 275 steps, first).
    ("app.cli.node", ["run", "--tracker", "http://127.0.0.1:9", "--recipe", "x"], "unknown-recipe"),
    ("app.cli.node", ["doctor", "--recipe", "llama-int4"], "unknown-recipe"),
    ("app.cli.node", ["hardware", "--memory-cap-mb", "lots"], "bad-config"),
    ("app.cli.node", ["login", "--tracker", "notaurl", "--token", "t"], "bad-tracker-url"),
    # No terminal and nothing on stdin (its own session: getpass cannot open /dev/tty).
    ("app.cli.node", ["login", "--tracker", "http://127.0.0.1:9"], "bad-config"),
    ("app.cli.meshnet", ["chat", "--tracker", "http://127.0.0.1:9", "hi"], "gateway-error"),
    ("tracker_service.cli", ["serve", "--port", "80000"], "bad-setting"),
    ("tracker_service.cli", ["serve", "--port", "0", "--db", "foo://x"], "bad-database-url"),
    (
        "tracker_service.cli",
        ["serve", "--port", "0", "--db", "postgresql+psycopg://nobody:pw@127.0.0.1:9/x"],
        "database-unreachable",
    ),
    ("tracker_service.cli", ["recipes", "--db", "sqlite:///{tmp}/none/x.db"], "database-missing"),
    *(
        (
            "tracker_service.cli",
            [kind, *action, "--db", "sqlite:///{tmp}/none/x.db"],
            "database-missing",
        )
        for kind in ("tokens", "keys", "submitters")
        for action in (["list"], ["revoke", "1"])
    ),
    ("tracker_service.cli", ["submitters", "list", "--db", "foo://x"], "bad-database-url"),
]


@pytest.mark.parametrize(("module", "argv", "reason"), CASES, ids=lambda v: str(v))
def test_a_bad_input_is_one_sentence_with_a_reason_and_no_traceback(
    tmp_path: Path, module: str, argv: list[str], reason: str
) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO), MESHNET_HOME=str(tmp_path / "home"))
    args = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    done = subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    assert done.returncode != 0
    assert "Traceback" not in done.stderr and "Traceback" not in done.stdout
    assert f"[{reason}]" in done.stderr, done.stderr
    assert not (tmp_path / "none").exists()  # a read-only command created nothing
