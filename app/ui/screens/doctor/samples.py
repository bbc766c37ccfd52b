"""Realistic wizard pages for ``--screenshot`` (DoctorWizard.show_sample): no node child
runs, no tracker is asked, nothing is saved. Only ``show_sample`` imports this module, so
a wizard a user opens never loads the samples."""

from __future__ import annotations

from typing import Any

from core.network.invites import NetworkInfo
from core.network.joined_network import JoinedNetwork

SAMPLE_HARDWARE: dict[str, Any] = {
    "device": {
        "kind": "cuda",
        "name": "NVIDIA GeForce RTX 4070",
        "total_bytes": 12_878_086_144,
        "free_bytes": 11_234_000_000,
    },
    "ram_total_bytes": 34_359_738_368,
    "ram_available_bytes": 21_474_836_480,
    "disk_free_bytes": 412_316_860_416,
    "cpu_count": 16,
    "model": {
        "model_id": "HuggingFaceTB/SmolLM2-135M-Instruct",
        "layer_count": 30,
        "imported": False,
    },
    "suggested_layers": [0, 30],
    "suggestion": "Layers 0–30 of SmolLM2-135M-Instruct (the whole model) fit: they need "
    "1.2 GB, 11.2 GB of graphics memory is free.",
}

SAMPLE_REPORT: dict[str, Any] = {
    "status": "passed",
    "diagnostics": [],
    "tokens_per_second": 41.7,
    "shard": {"start": 0, "end": 30},
    "model": {"model_id": "HuggingFaceTB/SmolLM2-135M-Instruct"},
}


SAMPLE_LINK = (
    "meshnet://join?tracker=https://tracker.riverside-makers.example&code=K7QX-2M9P"
    "&key=3f9a1c0e7b2d4a6f8e1b3c5d7f9a0b2c"
)
SAMPLE_NETWORK = NetworkInfo(
    name="Riverside Makers",
    operator="Riverside Makerspace e.V.",
    description="Members' gaming PCs answer questions for the makerspace's chat assistant "
    "in the evenings and at weekends.",
    models=("HuggingFaceTB/SmolLM2-135M-Instruct",),
    raw={},
)
SAMPLE_JOINED = JoinedNetwork(
    tracker_url="https://tracker.riverside-makers.example",
    key_fingerprint="3f9a1c0e7b2d4a6f8e1b3c5d7f9a0b2c",
    join_token="",
    name="Riverside Makers",
    operator="Riverside Makerspace e.V.",
)


def sample_report(name: str) -> dict[str, Any] | None:
    """The saved test report a result page shows: passed, failed, or none yet."""
    if name in ("result-passed", "leaderboard"):
        return dict(SAMPLE_REPORT)
    if name == "result-failed":
        return {
            **SAMPLE_REPORT,
            "status": "failed",
            "tokens_per_second": None,
            "diagnostics": [
                "Not enough memory: this range needs 1.2 GB, 0.3 GB is free. Choose fewer layers."
            ],
        }
    return None


# (page, done, the node's sentence, total, its stage code) for the pages mid-run
SAMPLE_PROGRESS: dict[str, tuple[int, str, int, str]] = {
    "import": (160, "Unpacking the default model…", 275, "import"),
    "test": (12, "Checking layers 0–15 against the reference…", 19, "probe"),
}
