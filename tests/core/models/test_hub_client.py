"""What the loopback Hub of tests/app/test_node_models_pull.py does not reach: local ids, and
the byte counter under huggingface_hub's Xet progress reporter."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from core.models.hub_client import ByteBar
from core.models.hub_pull import hub_model_id


def test_a_repository_id_becomes_a_local_model_id() -> None:
    assert hub_model_id("HuggingFaceTB/SmolLM2-135M") == "huggingfacetb--smollm2-135m"
    assert hub_model_id("gpt2") == "gpt2"


def test_plain_downloads_count_each_chunk_and_a_resumed_start() -> None:
    seen: list[int] = []
    bar_class = ByteBar.for_callback(seen.append)
    with bar_class(desc="x", total=10, initial=3, unit="B") as bar:
        bar.update(4)
        bar.update_transfer(4)  # network bytes: not counted twice
        bar.update(3)
    assert seen == [3, 4, 3]


def test_xet_downloads_count_the_bytes_written_once() -> None:
    progress = pytest.importorskip("huggingface_hub.utils._xet_progress_reporting")
    seen: list[int] = []
    reporter = progress.XetDownloadProgressReporter(
        reconstruction_desc="model.safetensors",
        total=100,
        log_level=30,
        tqdm_class=ByteBar.for_callback(seen.append),
    )
    with reporter:
        for written, received in ((40, 30), (100, 90)):
            reporter.update_progress(
                SimpleNamespace(
                    total_bytes=100,
                    total_bytes_completed=written,
                    total_transfer_bytes_completed=received,
                    total_bytes_completion_rate=None,
                    total_transfer_bytes_completion_rate=None,
                )
            )
    assert sum(seen) == 100
