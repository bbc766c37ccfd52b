"""benchmarks/gpu_check.py on a machine without a CUDA GPU: it says so and measures nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA GPU")
def test_without_a_cuda_gpu_the_check_exits_with_a_sentence() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "gpu_check.py")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 2
    assert "no CUDA GPU" in done.stderr and "Nothing was measured" in done.stderr
    assert done.stdout == ""
