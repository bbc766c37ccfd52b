"""A node's default KV budget, from the memory it has.

Without a budget a node accepts sessions until an allocation fails, and on
most machines that means swapping or the OOM killer long before torch raises.
So a node the owner gave no ``--kv-budget-mb`` still refuses sessions past a
share of the memory free once its shard is loaded: on a GPU the device's free
memory, on the CPU the system's available memory (the rest stays for the
activations of each step, the OS and the owner's own programs).
"""

from __future__ import annotations

import logging

import psutil
import torch

log = logging.getLogger(__name__)

GPU_SHARE = 0.8
CPU_SHARE = 0.5
MIN_BUDGET_BYTES = 16 * 1024 * 1024


def default_kv_budget_bytes(device: torch.device) -> int:
    """The KV bytes a node reserves at most when its owner set no budget."""
    if device.type == "cuda" and torch.cuda.is_available():
        free, _total = torch.cuda.mem_get_info(device)
        budget = int(free * GPU_SHARE)
    else:
        budget = int(psutil.virtual_memory().available * CPU_SHARE)
    budget = max(budget, MIN_BUDGET_BYTES)
    log.info("no KV budget configured: defaulting to %.0f MB on %s", budget / 2**20, device)
    return budget
