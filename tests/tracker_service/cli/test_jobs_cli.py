"""`meshnet-tracker submitters` and the jobs commands' own checks (no tracker needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracker_service.cli.commands import main


def test_submitter_tokens_are_added_listed_and_revoked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 't.db'}"
    assert main(["submitters", "add", "--db", db, "--label", "alice"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1].startswith("mns_")
    assert main(["submitters", "list", "--db", db]) == 0
    assert "alice" in capsys.readouterr().out
    assert main(["submitters", "revoke", "--db", db, "1"]) == 0
    assert main(["submitters", "revoke", "--db", db, "1"]) == 1
    main(["submitters", "list", "--db", db])
    assert "revoked" in capsys.readouterr().out


def test_jobs_need_a_submitter_token(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("MESHNET_SUBMITTER_TOKEN", raising=False)
    assert main(["jobs", "list", "--tracker", "http://127.0.0.1:9"]) == 2
    assert "submitter token" in capsys.readouterr().err


def test_an_unpack_name_that_is_no_input_is_refused_before_upload(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "jobs",
            "submit",
            "selftest",
            "--unpack",
            "code",
            "--token",
            "x",
            "--tracker",
            "http://127.0.0.1:9",
        ]
    )
    assert code == 2 and "--unpack names no --input" in capsys.readouterr().err


def test_an_unsafe_input_name_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        main(["jobs", "submit", "selftest", "--input", f"../x={tmp_path / 'f'}", "--token", "x"])


def test_an_unreachable_tracker_is_one_sentence_not_a_traceback(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["jobs", "list", "--token", "x", "--tracker", "http://127.0.0.1:9"]) == 2
    assert "cannot reach the tracker" in capsys.readouterr().err


def test_results_are_the_agreed_runs_files_only() -> None:
    from tracker_service.cli.jobs import _agreed_outputs

    base = "jobs/j/t/"
    outputs = [{"key": base + k} for k in ("metrics.json", "check-1/metrics.json", "check-2/x")]
    first = {"result_prefix": base, "outputs": outputs}
    assert [o["key"] for o in _agreed_outputs(first, base)] == [base + "metrics.json"]
    check = {"result_prefix": base + "check-1/", "outputs": outputs}
    assert [o["key"] for o in _agreed_outputs(check, base)] == [base + "check-1/metrics.json"]
    running = {"result_prefix": None, "outputs": outputs}
    assert _agreed_outputs(running, base) == outputs
