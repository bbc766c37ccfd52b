"""Rebuild a Hugging Face ``tokenizer.json`` from the vocabulary a GGUF file carries.

GGUF stores the BPE vocabulary, merges and token types; llama.cpp's ``smollm``
and ``gpt2`` pre-tokenizer types name how text is split before BPE. We write the
same pipeline with ``tokenizers`` so the node, the tracker and any standard
reader tokenize identically.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors

from core.errors import ModelImportError

_CONTROL_TOKEN_TYPE = 3
# Pre-tokenizer types whose llama.cpp regex splits every digit on its own before
# the GPT-2 pattern (StarCoder-style vocabularies, SmolLM among them).
_INDIVIDUAL_DIGIT_TYPES = frozenset({"smollm", "starcoder", "refact", "codeshell"})


def _field(reader: Any, key: str) -> Any:
    field = reader.fields.get(key)
    return None if field is None else field.contents()


def build_tokenizer(reader: Any) -> tuple[Tokenizer, dict[str, Any]]:
    kind = _field(reader, "tokenizer.ggml.model")
    if kind != "gpt2":
        raise ModelImportError(
            f"the GGUF tokenizer is of type {kind!r}; the importer reads byte-level BPE ('gpt2')"
        )
    tokens: list[str] = list(_field(reader, "tokenizer.ggml.tokens"))
    merges_raw: list[str] = list(_field(reader, "tokenizer.ggml.merges"))
    types: list[int] = list(_field(reader, "tokenizer.ggml.token_type") or [])
    vocab = {token: index for index, token in enumerate(tokens)}
    merges = [tuple(merge.split(" ", 1)) for merge in merges_raw]
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=merges, fuse_unk=False))  # type: ignore[arg-type]
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    if _field(reader, "tokenizer.ggml.pre") in _INDIVIDUAL_DIGIT_TYPES:
        tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Digits(individual_digits=True), byte_level]
        )
    else:
        tokenizer.pre_tokenizer = byte_level
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    specials = [
        AddedToken(tokens[i], special=True, normalized=False)
        for i, kind_of in enumerate(types)
        if kind_of == _CONTROL_TOKEN_TYPE
    ]
    tokenizer.add_special_tokens(specials)

    def token(key: str) -> str | None:
        index = _field(reader, key)
        return tokens[int(index)] if index is not None else None

    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": token("tokenizer.ggml.bos_token_id"),
        "eos_token": token("tokenizer.ggml.eos_token_id"),
        "unk_token": token("tokenizer.ggml.unknown_token_id"),
        "pad_token": token("tokenizer.ggml.padding_token_id"),
        "add_bos_token": bool(_field(reader, "tokenizer.ggml.add_bos_token")),
        "clean_up_tokenization_spaces": False,
        "model_max_length": int(_field(reader, "llama.context_length") or 2048),
        "chat_template": _field(reader, "tokenizer.chat_template"),
    }
    return tokenizer, config


def build_tokenizer_files(reader: Any, folder: Path) -> None:
    tokenizer, config = build_tokenizer(reader)
    tokenizer.save(str(Path(folder) / "tokenizer.json"))
    (Path(folder) / "tokenizer_config.json").write_text(
        json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
