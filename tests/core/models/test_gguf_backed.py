"""A GGUF import keeps the file as its weights (``model.gguf``), about the GGUF's size on
disk, and the runtime reads it tensor by tensor: every tensor, every shard's logits, float32
and 4-bit, equal to the unpacked (float32 safetensors) import's bit for bit."""

from __future__ import annotations

import os
from pathlib import Path

import gguf
import numpy as np
import pytest
import torch
from gguf import GGMLQuantizationType as T
from safetensors.torch import load_file

from core.doctor.checkup import DoctorRequest, run_doctor
from core.doctor.hardware import footprint_from_shapes, tensor_shapes
from core.errors import ModelImportError
from core.models.gguf_import import import_gguf
from core.models.local import list_local_models
from core.models.manifest import ModelManifest
from core.progress import Progress
from core.runtime import Shard
from core.runtime.gguf_weights import GGUF_NAME, GgufWeightSource
from core.runtime.quality import chain_logits
from core.runtime.quant import INT4_G32_INT8_HEAD, NO_QUANTIZATION
from core.runtime.weights import WeightSource, open_weights
from tests.core.models.test_gguf_families import (
    _MATRIX_TYPES,
    LAYERS,
    add_byte_tokenizer,
    write_gguf,
)

ARCHS = ["llama", "gemma3"]  # llama: q/k rows permuted, an untied head; gemma3: norms shifted


def _both(tmp_path: Path, arch: str) -> tuple[Path, Path, Path]:
    """(the GGUF, its GGUF-backed import, its unpacked import)."""
    path = write_gguf(tmp_path / f"{arch}.gguf", arch)
    backed = import_gguf(path, tmp_path / "backed", model_id=f"tiny-{arch}", label=arch)
    unpacked = import_gguf(
        path, tmp_path / "unpacked", model_id=f"tiny-{arch}", label=arch, unpack=True
    )
    return path, backed, unpacked


def test_a_backed_import_holds_the_gguf_itself_and_no_safetensors(tmp_path: Path) -> None:
    path, backed, unpacked = _both(tmp_path, "llama")
    stored = backed / GGUF_NAME
    assert stored.stat().st_size == path.stat().st_size
    assert stored.read_bytes() == path.read_bytes()
    assert os.path.samefile(stored, path)  # a hard link: one copy on disk
    assert list(backed.glob("*.safetensors")) == []
    manifest = ModelManifest.load(backed)
    assert set(manifest.files) == {
        GGUF_NAME,
        "config.json",
        "generation_config.json",
        "tokenizer.json",
        "tokenizer_config.json",
    }
    assert manifest.verify(backed) == []
    assert manifest.source is not None and manifest.source["kind"] == "gguf"
    assert manifest.source["file"] == path.name
    assert manifest.revision == ModelManifest.load(unpacked).revision
    for name in ("config.json", "generation_config.json", "tokenizer.json"):
        assert (backed / name).read_bytes() == (unpacked / name).read_bytes()
    # --unpack still writes float32 safetensors, several times the file's size
    assert not (unpacked / GGUF_NAME).exists()
    assert (unpacked / "model.safetensors").stat().st_size > 3 * path.stat().st_size
    assert sorted(m.model_id for m in list_local_models(tmp_path)) == ["tiny-llama"] * 2


def test_importing_again_keeps_a_folder_of_the_same_form_and_replaces_the_other(
    tmp_path: Path,
) -> None:
    path = write_gguf(tmp_path / "llama.gguf", "llama")
    folder = import_gguf(path, tmp_path / "m", model_id="m")
    recorded = (folder / "meshnet-manifest.json").stat().st_mtime_ns
    assert import_gguf(path, folder, model_id="m") == folder
    assert (folder / "meshnet-manifest.json").stat().st_mtime_ns == recorded
    import_gguf(path, folder, model_id="m", unpack=True)
    assert sorted(p.name for p in folder.glob("model.*")) == ["model.safetensors"]
    import_gguf(path, folder, model_id="m")
    assert sorted(p.name for p in folder.glob("model.*")) == [GGUF_NAME]
    assert path.read_bytes()[:4] == b"GGUF"  # replacing the folder left the source


def test_a_gguf_on_another_filesystem_is_copied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_gguf(tmp_path / "llama.gguf", "llama")

    def cross_device(_src: object, _dst: object) -> None:
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", cross_device)
    folder = import_gguf(path, tmp_path / "copied", model_id="copied")
    assert not os.path.samefile(folder / GGUF_NAME, path)
    assert (folder / GGUF_NAME).read_bytes() == path.read_bytes()
    assert ModelManifest.load(folder).verify(folder) == []


def test_a_backed_import_reads_the_gguf_through_once_to_hash_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.models import gguf_import, manifest

    hashed: list[str] = []
    sha256_file = manifest.sha256_file

    def counting(path: Path) -> str:
        hashed.append(Path(path).name)
        return sha256_file(path)

    path = write_gguf(tmp_path / "llama.gguf", "llama")
    monkeypatch.setattr(gguf_import, "sha256_file", counting)
    monkeypatch.setattr(manifest, "sha256_file", counting)
    folder = import_gguf(path, tmp_path / "once", model_id="once")
    assert hashed.count(GGUF_NAME) == 1  # a 40 GB file is read once, not twice
    assert ModelManifest.load(folder).verify(folder) == []


@pytest.mark.parametrize("arch", ARCHS)
def test_every_tensor_read_from_the_gguf_equals_the_unpacked_import(
    arch: str, tmp_path: Path
) -> None:
    path, backed, unpacked = _both(tmp_path, arch)
    types = {T(int(t.tensor_type)) for t in gguf.GGUFReader(str(path)).tensors}
    assert types >= set(_MATRIX_TYPES)  # every type the fixture writes is read back here
    source = open_weights(backed)
    assert isinstance(source, GgufWeightSource)
    assert isinstance(open_weights(unpacked), WeightSource)
    reference = load_file(str(unpacked / "model.safetensors"))
    assert {n for n in reference if source.has(n)} == set(reference)
    ours = source.load(sorted(reference))
    for name, tensor in reference.items():
        assert ours[name].dtype == torch.float32 and ours[name].is_contiguous()
        assert torch.equal(ours[name], tensor), name
    assert source.files_opened == [GGUF_NAME]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("scheme", [NO_QUANTIZATION, INT4_G32_INT8_HEAD])
def test_shards_of_the_backed_folder_compute_the_unpacked_folders_logits(
    arch: str, scheme: str, tmp_path: Path
) -> None:
    _, backed, unpacked = _both(tmp_path, arch)
    ids = torch.randint(0, 256, (24,), generator=torch.Generator().manual_seed(3)).tolist()
    for split in ([(0, LAYERS)], [(0, 2), (2, LAYERS)]):
        logits = [
            chain_logits([Shard.load(f, a, b, weight_quantization=scheme) for a, b in split], ids)
            for f in (backed, unpacked)
        ]
        assert torch.equal(logits[0], logits[1]), (split, scheme)
    shard = Shard.load(backed, 2, LAYERS, weight_quantization=scheme)
    assert shard.files_opened == (GGUF_NAME,)


@pytest.mark.parametrize("arch", ARCHS)
def test_sizing_reads_the_same_shapes_from_either_form(arch: str, tmp_path: Path) -> None:
    _, backed, unpacked = _both(tmp_path, arch)
    shapes = tensor_shapes(backed)
    assert shapes == tensor_shapes(unpacked)
    source = GgufWeightSource(backed)
    assert source.shapes() == shapes
    reader = gguf.GGUFReader(str(backed / GGUF_NAME))
    assert sum(source.stored_bytes(n) for n in shapes) == sum(
        int(t.n_bytes) for t in reader.tensors
    )
    for scheme in (NO_QUANTIZATION, INT4_G32_INT8_HEAD):
        sizes = [
            footprint_from_shapes(
                tensor_shapes(folder),
                layer_count=LAYERS,
                num_kv_heads=1,
                head_dim=128,
                compute_itemsize=4,
                kv_itemsize=4,
                weight_quantization=scheme,
            )
            for folder in (backed, unpacked)
        ]
        assert sizes[0] == sizes[1] and sizes[0].weight_bytes(0, LAYERS) > 0


def test_the_doctor_passes_a_backed_folder(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "llama.gguf", "llama")
    folder = import_gguf(path, tmp_path / "backed", model_id="tiny-llama")
    outcome = run_doctor(DoctorRequest(model=str(folder), layers=(0, LAYERS), device="cpu"))
    assert outcome.report.passed, [c.detail for c in outcome.report.checks if not c.passed]


def test_an_interrupted_backed_import_leaves_no_complete_looking_folder(tmp_path: Path) -> None:
    class Interrupted(Exception):
        pass

    seen: list[Progress] = []

    def interrupt(progress: Progress) -> None:
        seen.append(progress)
        if progress.done == 2:  # the file is stored (linked), the rest not yet written
            raise Interrupted

    path = write_gguf(tmp_path / "llama.gguf", "llama")
    models = tmp_path / "models"
    models.mkdir()
    with pytest.raises(Interrupted):
        import_gguf(path, models / "tiny", model_id="tiny", progress=interrupt)
    assert list(models.iterdir()) == []
    assert [(p.done, p.total) for p in seen] == [(0, 0), (1, 4), (2, 4)]
    assert seen[1].message == "Checking the default model…"
    assert path.read_bytes()[:4] == b"GGUF"  # the source is untouched


def test_a_tensor_type_the_runtime_cannot_decode_is_refused_at_import(tmp_path: Path) -> None:
    path = tmp_path / "q2k.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_context_length(128)
    writer.add_embedding_length(256)
    writer.add_block_count(1)
    writer.add_feed_forward_length(256)
    writer.add_head_count(2)
    add_byte_tokenizer(writer)
    writer.add_tensor("token_embd.weight", np.zeros((256, 84), np.uint8), raw_dtype=T.Q2_K)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(ModelImportError, match=r"'token_embd\.weight' is of type Q2_K"):
        import_gguf(path, tmp_path / "q2k", model_id="q2k")
    assert list(tmp_path.iterdir()) == [path]
