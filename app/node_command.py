"""The command lines the app runs its node children with.

Pure (no Qt) so the mapping from settings to flags is tested on its own. From
a source or pip install the child is ``python -m app.cli.node`` with the
app's own interpreter; a frozen bundle (PyInstaller sets ``sys.frozen``) ships
a separate ``meshnet-node`` executable next to the app's, found by
:func:`node_executable` (the hook an installer changes if it lays files out
differently).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Protocol

# An installer may point the app at its bundled node with this variable.
NODE_EXECUTABLE_ENV = "MESHNET_NODE_EXECUTABLE"
# The app speaks to its children on stdin (stop, pause, resume, snapshot) and
# closes it to stop them, so it asks for that explicitly: without the flag a
# node ignores stdin and runs until signalled (app/cli/node_control.py).
STDIN_CONTROL = ("--control", "stdin")


class NodeSettings(Protocol):
    """The fields of ``app.settings_model.AppSettings`` that become node flags."""

    @property
    def tracker_url(self) -> str: ...
    @property
    def model(self) -> str | None: ...
    @property
    def layers(self) -> tuple[int, int] | None: ...
    @property
    def device(self) -> str | None: ...
    @property
    def memory_cap_mb(self) -> int | None: ...


def is_frozen() -> bool:
    return bool(getattr(sys, "frozen", False))


def node_executable() -> Path:
    """The bundled ``meshnet-node`` of a frozen app: beside the app's executable."""
    override = os.environ.get(NODE_EXECUTABLE_ENV)
    if override:
        return Path(override)
    name = "meshnet-node.exe" if sys.platform == "win32" else "meshnet-node"
    return Path(sys.executable).resolve().parent / name


def node_base_argv(*, frozen: bool | None = None) -> list[str]:
    """How to run ``meshnet-node`` from this app, before the sub-command."""
    if is_frozen() if frozen is None else frozen:
        return [str(node_executable())]
    return [sys.executable, "-m", "app.cli.node"]


def _model_flags(settings: NodeSettings, *, layers: bool = True) -> list[str]:
    flags: list[str] = []
    if settings.model:
        flags += ["--model", settings.model]
    if layers and settings.layers is not None:
        start, end = settings.layers
        flags += ["--layers", f"{start}:{end}"]
    if settings.device:
        flags += ["--device", settings.device]
    if settings.memory_cap_mb is not None:
        flags += ["--memory-cap-mb", str(int(settings.memory_cap_mb))]
    return flags


def identity_flags() -> list[str]:
    """``--identity-file`` where the app keeps the node's key in a file (no OS keyring
    works here, or the file was made before): the app's choice, never the user's flag."""
    from core.identity.keystore import fallback_identity_file

    path = fallback_identity_file()
    return ["--identity-file", str(path)] if path is not None else []


def node_run_argv(
    settings: NodeSettings, *, report_path: str | None = None, frozen: bool | None = None
) -> list[str]:
    """``meshnet-node run`` serving with JSON events, from the user's settings.

    No tracker address in the settings (the usual case) runs without --tracker: the
    node serves on the network the app joined. ``report_path`` reuses the wizard's
    fresh report instead of a second test forward.
    """
    argv = [*node_base_argv(frozen=frozen), "run"]
    if settings.tracker_url.strip():  # "I run my own tracker"
        argv += ["--tracker", settings.tracker_url.strip()]
    argv += ["--events", "json", *STDIN_CONTROL, *_model_flags(settings), *identity_flags()]
    if report_path:
        argv += ["--report", report_path]
    return argv


def node_doctor_argv(settings: NodeSettings, *, frozen: bool | None = None) -> list[str]:
    """``meshnet-node doctor --json`` for the same model, layers, device and cap."""
    return [
        *node_base_argv(frozen=frozen),
        "doctor",
        "--json",
        *STDIN_CONTROL,
        *_model_flags(settings),
    ]


def node_hardware_argv(settings: NodeSettings, *, frozen: bool | None = None) -> list[str]:
    """``meshnet-node hardware --json``: what this computer has and a suggested shard."""
    return [
        *node_base_argv(frozen=frozen),
        "hardware",
        "--json",
        *_model_flags(settings, layers=False),
    ]


def import_default_model_argv(*, frozen: bool | None = None) -> list[str]:
    return [*node_base_argv(frozen=frozen), "models", "import-default", "--json", *STDIN_CONTROL]


def hub_pull_argv(repo_id: str, revision: str = "main", *, frozen: bool | None = None) -> list[str]:
    """``meshnet-node models pull REPO_ID --json``: a whole Hub model, stopped through stdin.

    ``--revision=REV`` in one piece, so a revision that starts with "-" is never
    read as a flag."""
    return [
        *node_base_argv(frozen=frozen),
        "models",
        "pull",
        repo_id,
        f"--revision={revision}",
        "--json",
        *STDIN_CONTROL,
    ]


def child_environment(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a node child: unbuffered output, and (from a source
    tree) the project root on ``PYTHONPATH`` so ``-m app.cli.node`` resolves
    whatever the working folder is."""
    env = dict(os.environ if base is None else base)
    env["PYTHONUNBUFFERED"] = "1"
    env.setdefault("PYTHONIOENCODING", "utf-8")
    if not is_frozen():
        root = str(Path(__file__).resolve().parent.parent)
        parts = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        if root not in parts:
            env["PYTHONPATH"] = os.pathsep.join([root, *parts])
    return env


def jobs_run_argv(settings: NodeSettings, *, frozen: bool | None = None) -> list[str]:
    """``meshnet-node jobs run``: the batch executor the app runs while not serving.

    Empty when there is no tracker to ask (no network joined yet): nothing runs."""
    from app.network_join import tracker_url_for

    url = tracker_url_for(settings.tracker_url)
    if url is None:
        return []
    return [
        *node_base_argv(frozen=frozen),
        *("jobs", "run", "--tracker", url),
        *STDIN_CONTROL,
        *identity_flags(),
    ]
