"""Fixtures shared by every test package.

The real default model is imported once per machine into a cache folder
(``MESHNET_TEST_CACHE``, default ``.meshnet/test-cache`` in the checkout) so
the slow end-to-end tests do not each pay for the conversion.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


def _cache_root() -> Path:
    root = Path(os.environ.get("MESHNET_TEST_CACHE", REPO_ROOT / ".meshnet" / "test-cache"))
    root.mkdir(parents=True, exist_ok=True)
    return root


@pytest.fixture(scope="session")
def default_model_dir() -> Path:
    from core.models.default_model import ensure_default_model

    return ensure_default_model(_cache_root() / "models")


@pytest.fixture(autouse=True)
def isolated_meshnet_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every test writes reports, identities and models under its own folder."""
    home = tmp_path / "meshnet-home"
    monkeypatch.setenv("MESHNET_HOME", str(home))
    yield home
