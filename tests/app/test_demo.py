"""`meshnet demo` end to end: real tracker and node processes, certification, a streamed answer."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.demo.processes import split_layers
from core.errors import MeshnetError


@pytest.mark.slow
def test_demo_certifies_the_recipe_and_streams_an_answer(default_model_dir: Path) -> None:
    # models_dir() is MESHNET_HOME/models: point it at the cached import.
    env = dict(os.environ, MESHNET_HOME=str(default_model_dir.parent.parent))
    result = subprocess.run(
        [sys.executable, "-m", "app.cli.meshnet", "demo", "--prompt", "Say hello.",
         "--max-tokens", "8"],
        capture_output=True, text=True, timeout=600, env=env, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    for gate in ("capability", "admission", "registration"):
        assert out.count(f"✓ {gate}:") == 2, out
    assert "→ dark:" in out and "is certified: certified by route session" in out
    assert "route: " in out and "[0–15) → " in out
    assert "tokens/s decode" in out
    assert "/v1/chat/completions" in out and "curl -N" in out  # how to reach the gateway
    assert "from openai import OpenAI" in out


def test_layers_split_into_contiguous_ranges_that_tile_the_model() -> None:
    assert split_layers(30, 2) == [(0, 15), (15, 30)]
    assert split_layers(30, 3) == [(0, 10), (10, 20), (20, 30)]
    ranges = split_layers(7, 3)
    assert ranges[0][0] == 0 and ranges[-1][1] == 7
    assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))


def test_too_many_nodes_for_the_layers_is_a_clear_error() -> None:
    with pytest.raises(MeshnetError, match="cannot split 2 layers into 3 nodes"):
        split_layers(2, 3)
