"""`meshnet-tracker serve` start-up refusals: one sentence and a reason code."""

from __future__ import annotations

import logging
import socket
from pathlib import Path

import pytest
import uvicorn

from tracker_service.cli.commands import main


def test_a_port_in_use_is_one_sentence_before_any_server_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def must_not_run(*_args: object, **_kw: object) -> None:
        raise AssertionError("uvicorn started on a port another program holds")

    monkeypatch.setattr(uvicorn, "run", must_not_run)
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        code = main(["serve", "--port", str(port), "--db", f"sqlite:///{tmp_path}/t.db"])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("meshnet-tracker: cannot listen on 127.0.0.1:") and "--port" in err
    assert err.rstrip().endswith("[port-in-use]") and "Traceback" not in err


def test_a_free_port_goes_on_to_serve(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    served: list[int] = []
    monkeypatch.setattr(uvicorn, "run", lambda _app, **kw: served.append(kw["port"]))
    with socket.socket() as finder:
        finder.bind(("127.0.0.1", 0))
        port = finder.getsockname()[1]  # free again once closed
    httpx_log = logging.getLogger("httpx")
    monkeypatch.setattr(httpx_log, "level", logging.NOTSET)
    assert main(["serve", "--port", str(port), "--db", f"sqlite:///{tmp_path}/t.db"]) == 0
    assert served == [port]
    # The reachability dialer's every challenge is not an INFO line of the tracker's log.
    assert httpx_log.level == logging.WARNING


def test_the_help_names_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    described = text.split("positional arguments")[0]
    for command in ("serve", "relay", "recipes", "tokens", "keys", "submitters", "jobs"):
        assert command in described, command
    for action in ("back up", "restore", "check"):
        assert action in described, action


def test_relay_help_describes_the_command_and_every_option(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["relay", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "Run a relay as its own process" in text
    for option, default in (
        ("--port", "8766"),
        ("--max-streams-per-node", "1024"),
        ("--log-level", "info"),
        ("--host", "127.0.0.1"),
    ):
        after = text.split(option, 2)[-1]  # the option's own line, past the usage summary
        assert f"(default: {default})" in after.split(" --")[0], option
