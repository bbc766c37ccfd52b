"""The family adapter is the one place a family is declared: the GGUF importer's
architectures, the GGUF tokenizer's Gemma vocabulary and the recipe catalogue's
``architecture`` names all come from ``ADAPTERS``."""

from __future__ import annotations

import ast
import inspect

from core.models import gguf_tokenizer
from core.recipes.catalogue import load_catalogue
from core.runtime import gguf_arch
from core.runtime.families import ADAPTERS, GGUF_FAMILIES, adapter_for


def test_every_catalogue_entry_names_an_adapter() -> None:
    names = {a.name for a in ADAPTERS}
    strays = {r.recipe_id: r.architecture for r in load_catalogue().recipes}
    assert {rid: arch for rid, arch in strays.items() if arch not in names} == {}


def test_every_adapter_has_catalogue_entries() -> None:
    catalogued = {r.architecture for r in load_catalogue().recipes}
    assert sorted(a.name for a in ADAPTERS if a.name not in catalogued) == []


def test_adapter_names_and_gguf_names_are_unique() -> None:
    assert len({a.name for a in ADAPTERS}) == len(ADAPTERS)
    gguf_names = [a.gguf.name for a in ADAPTERS if a.gguf is not None]
    assert len(set(gguf_names)) == len(gguf_names)


def test_the_gguf_importer_table_is_the_adapters() -> None:
    assert {a.gguf.name: a.gguf for a in ADAPTERS if a.gguf} == gguf_arch.ARCHITECTURES
    assert set(gguf_arch.ARCHITECTURES) == {"llama", "qwen2", "qwen3", "gemma2", "gemma3"}


def test_a_gguf_config_comes_back_to_its_own_adapter() -> None:
    # The config.json written from a GGUF is claimed by the adapter that declared it.
    for adapter in ADAPTERS:
        if adapter.gguf is None:
            continue
        assert adapter.gguf.hf_class in adapter.arch_classes, adapter.name
        assert adapter.gguf.model_type in adapter.model_types, adapter.name
        config = {"model_type": adapter.gguf.model_type, "architectures": [adapter.gguf.hf_class]}
        assert adapter_for(config) is adapter


def test_the_gguf_tokenizer_reads_gemma_from_the_adapters() -> None:
    assert gguf_tokenizer.GGUF_FAMILIES is GGUF_FAMILIES
    gemma = sorted(n for n, a in GGUF_FAMILIES.items() if a.gemma_vocabulary)
    assert gemma == ["gemma2", "gemma3"]


def test_no_family_table_outside_the_adapters() -> None:
    """No module keeps its own set of architecture names (a second registry)."""
    names = {a.name for a in ADAPTERS} | set(GGUF_FAMILIES)
    for module in (gguf_arch, gguf_tokenizer):
        tree = ast.parse(inspect.getsource(module))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Set, ast.List, ast.Tuple, ast.Dict)):
                elements = node.keys if isinstance(node, ast.Dict) else node.elts
                literals: set[str] = set()
                for e in elements:
                    if isinstance(e, ast.Constant) and isinstance(e.value, str):
                        literals.add(e.value)
                assert len(literals & names) < 2, f"{module.__name__}: {sorted(literals)}"
