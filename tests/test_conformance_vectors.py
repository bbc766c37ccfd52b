"""The conformance vectors pin the node and the tracker to the same bytes; a
missing vector file must fail the suite, never skip the checks quietly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent / "data"
VECTOR_FILES = [
    "dataplane_vectors.json",
    "recipe_fingerprint_vectors.json",
    "signed_request_vectors.json",
]


@pytest.mark.parametrize("name", VECTOR_FILES)
def test_every_conformance_vector_file_is_committed_and_holds_vectors(name: str) -> None:
    path = DATA / name
    assert path.is_file(), f"{path} is missing; rebuild it with the tests' build_vectors modules"
    assert json.loads(path.read_text(encoding="utf-8")), f"{path} is empty"


def test_no_conformance_test_skips_when_its_vectors_are_missing() -> None:
    tests = Path(__file__).resolve().parent
    for module in tests.rglob("test_*.py"):
        text = module.read_text(encoding="utf-8")
        if "_vectors.json" in text and module.name != Path(__file__).name:
            assert "pytest.skip(" not in text, f"{module} skips instead of failing"
