"""The node children the app starts use the joined network unless the user runs their own
tracker (the Advanced choice); without either, nothing is started against a guess."""

from __future__ import annotations

from app.node_command import jobs_run_argv, node_run_argv
from app.settings_model import AppSettings
from core.identity.keystore import DEFAULT_PROFILE
from core.network.joined_network import JoinedNetwork, save_joined_network

JOINED = JoinedNetwork(
    tracker_url="https://tracker.club.example", key_fingerprint="a" * 32, join_token="mnj_x"
)


def test_the_node_runs_on_the_joined_network_without_tracker_flag() -> None:
    argv = node_run_argv(AppSettings(), frozen=True)
    assert argv[1:4] == ["run", "--events", "json"] and "--tracker" not in argv
    own = node_run_argv(AppSettings(tracker_url="http://10.0.0.5:8765"), frozen=True)
    assert own[1:4] == ["run", "--tracker", "http://10.0.0.5:8765"]


def test_batch_jobs_ask_the_joined_network_or_nobody() -> None:
    assert jobs_run_argv(AppSettings(), frozen=True) == []  # no network joined yet
    save_joined_network(DEFAULT_PROFILE, JOINED)
    joined = jobs_run_argv(AppSettings(), frozen=True)
    assert joined[joined.index("--tracker") + 1] == JOINED.tracker_url
    own = jobs_run_argv(AppSettings(tracker_url="http://10.0.0.5:8765"), frozen=True)
    assert own[own.index("--tracker") + 1] == "http://10.0.0.5:8765"


def test_joining_needs_nothing_from_the_tests_folder() -> None:
    """An installed app has no tests/ package: joining must not import from it."""
    import subprocess
    import sys

    code = "import sys, app.network_join, app.cli.node_join; print(sorted(m for m in sys.modules if m.split('.')[0] == 'tests'))"  # noqa: E501
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
