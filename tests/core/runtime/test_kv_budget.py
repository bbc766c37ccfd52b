"""A node without a configured KV budget gets one from the memory it has."""

from __future__ import annotations

import psutil
import torch

from core.runtime.kv_budget import CPU_SHARE, MIN_BUDGET_BYTES, default_kv_budget_bytes


def test_the_cpu_default_is_a_share_of_available_memory_never_unbounded() -> None:
    before = psutil.virtual_memory().available
    budget = default_kv_budget_bytes(torch.device("cpu"))
    after = psutil.virtual_memory().available
    assert budget >= MIN_BUDGET_BYTES
    assert budget <= max(before, after) * CPU_SHARE + 1
