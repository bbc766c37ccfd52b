"""`meshnet-node models pull REPO_ID [--revision REV] [--layers A:B]` against a Hub on loopback.

The Hub is ``tests/support/fake_hub.py`` serving two commits of a tiny random
Llama cut into eight safetensors files; huggingface_hub reaches it through
HF_ENDPOINT, and never the internet. The pulled folder must hold only the files
its layers need, be pinned to one commit, and compute what transformers
computes for those layers.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

from app.cli.node import main as node_main
from core.doctor.checkup import DoctorRequest, run_doctor
from core.models.hub import METADATA_FILES, files_for_layers
from core.models.local import list_local_models, resolve_model
from core.models.manifest import ModelManifest
from core.runtime import SessionManager, Shard
from tests.core.runtime.conftest import build_tiny, reference_logits, reference_model
from tests.support.fake_hub import FakeHub

REPO = "tiny-org/Tiny-Llama"
MODEL_ID = "tiny-org--tiny-llama"
LAYERS = 4
ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Hub:
    server: FakeHub
    old: Path  # the folder of the first commit
    old_commit: str
    new: Path  # the folder of the second commit, the head of main
    new_commit: str


def _repo_folder(folder: Path, seed: int) -> Path:
    build_tiny(folder, seed=seed, tie_word_embeddings=False, max_shard_size="100KB")
    (folder / "tokenizer.json").write_text("{}")
    (folder / "tokenizer_config.json").write_text("{}")
    return folder


@pytest.fixture(scope="module")
def repo_folders(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    old = _repo_folder(tmp_path_factory.mktemp("hub-old"), seed=4)
    new = _repo_folder(tmp_path_factory.mktemp("hub-new"), seed=5)
    return old, new


@pytest.fixture
def hub(
    repo_folders: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Hub]:
    from huggingface_hub import constants

    old, new = repo_folders
    with FakeHub() as server:
        old_commit = server.add_commit(REPO, old)
        new_commit = server.add_commit(REPO, new)
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
        monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)  # read once, at import
        yield Hub(server, old, old_commit, new, new_commit)


def _weights(folder: Path, start: int, end: int) -> set[str]:
    index = json.loads((folder / "model.safetensors.index.json").read_text())
    return set(files_for_layers(index["weight_map"], start, end, LAYERS, tied=False))


def _all_weights(folder: Path) -> set[str]:
    return {p.name for p in folder.glob("*.safetensors")}


def _hidden_states(folder: Path, ids: torch.Tensor) -> tuple[torch.Tensor, ...]:
    with torch.inference_mode():
        return tuple(reference_model(folder)(ids, output_hidden_states=True).hidden_states)


def test_pull_of_middle_layers_fetches_only_their_files_at_mains_commit_and_computes_them(
    hub: Hub, capsys: pytest.CaptureFixture[str]
) -> None:
    needed = _weights(hub.new, 1, 3)
    assert needed < _all_weights(hub.new)  # the repository really is cut finer than the range

    assert node_main(["models", "pull", REPO, "--layers", "1:3", "--json"]) == 0
    out, err = capsys.readouterr()
    result = json.loads(out.strip().splitlines()[-1])
    folder = Path(result["path"])
    assert result == {
        "path": str(folder),
        "model_id": MODEL_ID,
        "revision": hub.new_commit,
        "layers": [1, 3],
    }

    # only the config, the tokenizer, the index and the weight files of layers 1-2 were fetched,
    # every one at the commit main named when the pull began
    fetched = hub.server.downloads()
    assert all(path.startswith(f"{hub.new_commit}/") for path in fetched)
    names = {path.split("/", 1)[1] for path in fetched}
    metadata = {*METADATA_FILES, "generation_config.json", "model.safetensors.index.json"}
    assert names == metadata | needed
    asked = [path for _, path in hub.server.requests]
    assert not [p for p in asked if "/resolve/main/" in p or hub.old_commit in p]
    assert _all_weights(folder) == needed
    assert not (folder / ".cache").exists()

    # progress: JSON lines of stage "fetch", counting bytes up to the total
    events = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    assert events and all(e["kind"] == "progress" for e in events)
    data = [e["data"] for e in events]
    assert {d["stage"] for d in data} == {"fetch"}
    total = sum((hub.new / name).stat().st_size for name in needed)
    counted = [d["done"] for d in data if d["total"] == total]
    assert counted == sorted(counted) and counted[-1] == total
    assert events[-1]["message"] == "Fetched layers 1–3."

    # `models list` and `run --model ID` find it; the manifest is intact
    (listed,) = list_local_models()
    assert (listed.model_id, listed.folder) == (MODEL_ID, folder)
    assert resolve_model(MODEL_ID) == folder
    manifest = ModelManifest.load(folder)
    assert manifest.verify(folder) == []
    source = {"kind": "hub", "repo": REPO, "revision": hub.new_commit, "layers": [1, 3]}
    assert manifest.source == source

    # the shard computes layers 1-2 as transformers does
    shard = Shard.load(folder, 1, 3)
    ids = torch.randint(0, 256, (1, 12), generator=torch.Generator().manual_seed(0))
    states = _hidden_states(hub.new, ids)
    session = SessionManager(shard).open(64)
    hidden = session.step(states[1].float()).hidden
    torch.testing.assert_close(hidden, states[3].float(), rtol=1e-4, atol=1e-4)


def test_a_whole_model_pulled_at_a_pinned_commit_reproduces_transformers_logits(
    hub: Hub, capsys: pytest.CaptureFixture[str]
) -> None:
    assert node_main(["models", "pull", REPO, "--revision", hub.old_commit]) == 0
    out, err = capsys.readouterr()
    folder = Path(out.strip().splitlines()[-1])
    assert "Fetched layers 0–4." in err
    assert f"run --model {MODEL_ID} --layers 0:4" in err

    asked = [path for _, path in hub.server.requests]
    assert asked[0] == f"/api/models/{REPO}/revision/{hub.old_commit}"
    assert all(hub.old_commit in path for path in asked)  # never main, never the newer commit
    assert _all_weights(folder) == _all_weights(hub.old)
    assert ModelManifest.load(folder).revision == hub.old_commit

    ids = torch.randint(0, 256, (2, 12), generator=torch.Generator().manual_seed(1))
    session = SessionManager(Shard.load(folder, 0, LAYERS)).open(64, batch_size=2)
    logits = session.step(ids, return_logits=True).logits
    assert logits is not None
    torch.testing.assert_close(logits, reference_logits(hub.old, ids), rtol=1e-4, atol=1e-4)


def test_a_second_pull_keeps_what_it_has_and_fetches_only_new_weight_files(
    hub: Hub, capsys: pytest.CaptureFixture[str]
) -> None:
    assert node_main(["models", "pull", REPO, "--layers", "1:3"]) == 0
    held = _weights(hub.new, 1, 3)
    first = len(hub.server.requests)

    assert node_main(["models", "pull", REPO, "--layers", "1:2"]) == 0  # inside what is here
    assert hub.server.requests[first:] == [("GET", f"/api/models/{REPO}/revision/main")]
    assert "already here" in capsys.readouterr().err

    second = len(hub.server.requests)
    assert node_main(["models", "pull", REPO, "--layers", "0:4"]) == 0
    fetched = {
        path.rsplit("/", 1)[-1]
        for method, path in hub.server.requests[second:]
        if method == "GET" and path.endswith(".safetensors")
    }
    assert fetched == _all_weights(hub.new) - held
    folder = resolve_model(MODEL_ID)
    assert _all_weights(folder) == _all_weights(hub.new)
    assert ModelManifest.load(folder).source["layers"] == [0, 4]
    assert ModelManifest.load(folder).verify(folder) == []

    # another repository may not take its name
    capsys.readouterr()
    assert node_main(["models", "pull", "tiny-org/other", "--name", MODEL_ID]) == 2
    assert "already on this machine and did not come from" in capsys.readouterr().err
    assert _all_weights(resolve_model(MODEL_ID)) == _all_weights(hub.new)


def test_the_doctor_proves_the_pulled_layers_and_refuses_others_with_a_sentence(
    hub: Hub,
) -> None:
    assert node_main(["models", "pull", REPO, "--layers", "1:3"]) == 0
    chosen = run_doctor(DoctorRequest(model=MODEL_ID, device="cpu", save=False))
    assert chosen.report.passed, chosen.report.diagnostics
    assert (chosen.report.shard.start, chosen.report.shard.end) == (1, 3)

    refused = run_doctor(DoctorRequest(model=MODEL_ID, layers=(0, 2), device="cpu", save=False))
    assert refused.reason == "bad-layers" and not refused.report.passed
    assert refused.report.diagnostics == (
        "This folder holds only layers 1–3 of the model, so it cannot serve layers 0–2. "
        "Choose a range within 1:3, or pull those layers with `meshnet-node models pull`.",
    )


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize(
    ("argv", "sentence", "reason"),
    [
        (["tiny-org/no-such-model"], "is not a model repository on", "repo-not-found"),
        ([REPO, "--revision", "v9"], "has no revision 'v9'", "revision-not-found"),
        ([REPO, "--layers", "2:9"], "2–9 do not exist: choose a range within 0:4", "bad-layers"),
        ([REPO, "--name", "../escape"], "cannot name a pulled model", "bad-model-id"),
        ([REPO, "--no-network"], "could not reach", "hub-unreachable"),
        ([REPO, "--offline"], "HF_HUB_OFFLINE is set", "hub-offline"),
    ],
    ids=["unknown-repo", "unknown-revision", "layers-outside", "bad-name", "no-network", "offline"],
)  # fmt: skip
def test_a_refused_pull_says_why_in_a_sentence_and_leaves_no_model(
    hub: Hub,
    argv: list[str],
    sentence: str,
    reason: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if "--no-network" in argv:
        argv.remove("--no-network")
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
    if "--offline" in argv:
        from huggingface_hub import constants

        argv.remove("--offline")
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    assert node_main(["models", "pull", *argv, "--json"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert sentence in err and f"[{reason}]" in err and "Traceback" not in err
    error = next(json.loads(line) for line in err.splitlines() if '"kind": "error"' in line)
    assert error["reason"] == reason
    assert not [path for path in hub.server.downloads() if path.endswith(".safetensors")]
    assert list_local_models() == []


@pytest.mark.slow
def test_the_command_line_reads_hf_endpoint_as_huggingface_hub_does(
    hub: Hub, tmp_path: Path
) -> None:
    """A real process: HF_ENDPOINT is in its environment before huggingface_hub is imported."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1")
    argv = [sys.executable, "-m", "app.cli.node", "models", "pull", REPO, "--layers", "0:2"]
    done = subprocess.run(
        [*argv, "--json"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["layers"] == [0, 2] and result["revision"] == hub.new_commit
    assert _all_weights(Path(result["path"])) == _weights(hub.new, 0, 2)
    events = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    assert {e["data"]["stage"] for e in events} == {"fetch"}
