"""Dtype and device names as the recipe spells them, checked against the machine."""

from __future__ import annotations

import torch

from core.errors import ConfigError

DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32,
    "bfloat16": torch.bfloat16,
    "float16": torch.float16,
}
DEVICES = ("cpu", "cuda", "mps")


def parse_dtype(name: str) -> torch.dtype:
    """Map a recipe dtype name to torch; ConfigError names the accepted ones."""
    try:
        return DTYPES[name]
    except KeyError:
        raise ConfigError(
            f"dtype {name!r} is not supported; use one of {sorted(DTYPES)}", reason="bad-dtype"
        ) from None


def dtype_name(dtype: torch.dtype) -> str:
    for name, value in DTYPES.items():
        if value == dtype:
            return name
    raise ConfigError(
        f"dtype {dtype} is not supported; use one of {sorted(DTYPES)}", reason="bad-dtype"
    )


def parse_device(name: str) -> torch.device:
    kind = name.split(":", 1)[0]
    if kind not in DEVICES:
        raise ConfigError(
            f"device {name!r} is not supported; use one of {list(DEVICES)}", reason="bad-device"
        )
    if kind == "cuda" and not torch.cuda.is_available():
        raise ConfigError(
            "device 'cuda' was asked for but torch sees no CUDA GPU", reason="bad-device"
        )
    if kind == "mps" and not torch.backends.mps.is_available():
        raise ConfigError(
            "device 'mps' was asked for but torch sees no Apple GPU", reason="bad-device"
        )
    return torch.device(name)


def check_dtype_on_device(dtype: torch.dtype, device: torch.device) -> None:
    """Run a tiny matmul + attention so an unsupported pair fails here, clearly,
    instead of in the middle of a user's session."""
    try:
        a = torch.ones(4, 4, dtype=dtype, device=device)
        (a @ a).sum().item()
        q = torch.ones(1, 1, 2, 4, dtype=dtype, device=device)
        torch.nn.functional.scaled_dot_product_attention(q, q, q).sum().item()
    except (RuntimeError, TypeError, NotImplementedError) as exc:
        raise ConfigError(
            f"{dtype_name(dtype)} does not compute on {device} with torch {torch.__version__} "
            f"({exc}); choose another compute/kv dtype",
            reason="dtype-unsupported-on-device",
        ) from exc
