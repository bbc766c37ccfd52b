"""Shared fixtures for the node core tests."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from keyring.backends import fail

from tests.core.keyring_backend import DictKeyring


@pytest.fixture
def dict_keyring() -> Iterator[DictKeyring]:
    """Install an in-memory keyring for the test, restoring the previous one after."""
    previous = keyring.get_keyring()
    backend = DictKeyring()
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.set_keyring(previous)


@pytest.fixture
def no_keyring() -> Iterator[None]:
    """The headless-Linux situation: only keyring's 'fail' backend is available."""
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        yield
    finally:
        keyring.set_keyring(previous)


def make_tiny_model(folder: Path, *, layers: int = 4, seed: int = 0, tie: bool = False) -> Path:
    """A real (random) Llama model folder: HF config + safetensors + tokenizer + manifest.

    Built with transformers' own save_pretrained, so the runtime loads exactly the
    names and layout a hub model has; small enough to build in well under a second.
    """
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    from core.models.manifest import ModelManifest
    from tests.tiny_llama import save_tiny_llama

    save_tiny_llama(folder, layers=layers, seed=seed, tie=tie, rms_norm_eps=1e-5)
    tokenizer = Tokenizer(WordLevel({f"w{i}": i for i in range(96)}, unk_token="w0"))
    tokenizer.pre_tokenizer = Whitespace()
    tokenizer.save(str(folder / "tokenizer.json"))
    ModelManifest.build(
        folder,
        model_id="tiny-llama",
        revision="test-rev-1",
        architecture="LlamaForCausalLM",
        layer_count=layers,
        source={"kind": "test-fixture"},
    ).write(folder)
    return folder


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 4-layer random Llama folder shared by the whole session (treat as read-only)."""
    return make_tiny_model(tmp_path_factory.mktemp("tiny-llama"))


@pytest.fixture(scope="session")
def tiny_tied_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same shape with tied input/output embeddings (no lm_head.weight on disk)."""
    return make_tiny_model(tmp_path_factory.mktemp("tiny-llama-tied"), tie=True)


def copy_model(source: Path, destination: Path) -> Path:
    """A private copy of a model folder a test may damage."""
    shutil.copytree(source, destination)
    return destination
