"""Rebuild a Hugging Face ``tokenizer.json`` from the vocabulary a GGUF file carries.

GGUF stores the BPE vocabulary, merges and token types; llama.cpp's ``smollm``
and ``gpt2`` pre-tokenizer types name how text is split before BPE. We write the
same pipeline with ``tokenizers`` so the node, the tracker and any standard
reader tokenize identically.

Gemma's vocabulary is SentencePiece (``tokenizer.ggml.model`` "llama") and comes
without merges: they are rebuilt from the vocabulary as transformers' GGUF
loader does (every split of a token into two known tokens, ranked by the
token's position in the file), with byte fallback and spaces spelled "▁".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tokenizers import (
    AddedToken,
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
)

from core.errors import ModelImportError
from core.runtime.families import GGUF_FAMILIES

_CONTROL_TOKEN_TYPE = 3
# Gemma's turn format (the template of Google's instruction-tuned checkpoints, text
# only): a system message opens the first user turn; the model's turns are "model".
GEMMA_CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% set first = 0 %}{% set prefix = '' %}"
    "{% if messages and messages[0]['role'] == 'system' %}"
    "{% set prefix = messages[0]['content'] + '\\n\\n' %}{% set first = 1 %}{% endif %}"
    "{% for message in messages[first:] %}"
    "{% set role = 'model' if message['role'] == 'assistant' else message['role'] %}"
    "{{ '<start_of_turn>' + role + '\\n' + (prefix if loop.first else '') "
    "+ message['content'] | trim + '<end_of_turn>\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<start_of_turn>model\\n' }}{% endif %}"
)
# Pre-tokenizer types whose llama.cpp regex splits every digit on its own before
# the GPT-2 pattern (StarCoder-style vocabularies, SmolLM among them).
_INDIVIDUAL_DIGIT_TYPES = frozenset({"smollm", "starcoder", "refact", "codeshell"})


def _field(reader: Any, key: str) -> Any:
    field = reader.fields.get(key)
    return None if field is None else field.contents()


def _gemma_sentencepiece(reader: Any) -> Tokenizer:
    """Gemma's SentencePiece vocabulary as a byte-fallback BPE (transformers' GemmaTokenizer)."""
    # a token of only spaces is stored with real spaces; the normalizer spells them "▁"
    tokens = [
        "▁" * len(t) if " " in t and not t.strip() else t
        for t in _field(reader, "tokenizer.ggml.tokens")
    ]
    vocab = {token: index for index, token in enumerate(tokens)}
    ranked: list[tuple[int, int, int, str, str]] = []
    for rank, token in enumerate(tokens):
        pairs = [
            (token[:cut], token[cut:])
            for cut in range(1, len(token))
            if token[:cut] in vocab and token[cut:] in vocab
        ]
        pairs.sort(key=lambda pair: (vocab[pair[0]], vocab[pair[1]]))
        ranked += [(rank, len(left), len(right), left, right) for left, right in pairs]
    ranked.sort(key=lambda item: (item[0], -item[1], -item[2]))  # file order: best first
    merges = [(left, right) for _, _, _, left, right in ranked]
    unk = _token(reader, tokens, "tokenizer.ggml.unknown_token_id") or "<unk>"
    tokenizer = Tokenizer(
        models.BPE(vocab=vocab, merges=merges, fuse_unk=True, unk_token=unk, byte_fallback=True)
    )
    tokenizer.pre_tokenizer = pre_tokenizers.Split(" ", behavior="merged_with_previous")
    tokenizer.normalizer = normalizers.Replace(" ", "▁")
    tokenizer.decoder = decoders.Sequence(
        [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()]
    )
    return tokenizer


def _token(reader: Any, tokens: list[str], key: str) -> str | None:
    index = _field(reader, key)
    return tokens[int(index)] if index is not None else None


def _byte_level_bpe(reader: Any) -> Tokenizer:
    tokens: list[str] = list(_field(reader, "tokenizer.ggml.tokens"))
    merges_raw: list[str] = list(_field(reader, "tokenizer.ggml.merges"))
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
    return tokenizer


def build_tokenizer(
    reader: Any, model_config: dict[str, Any] | None = None
) -> tuple[Tokenizer, dict[str, Any]]:
    kind = _field(reader, "tokenizer.ggml.model")
    arch = _field(reader, "general.architecture")
    family = GGUF_FAMILIES.get(arch)
    gemma = family is not None and family.gemma_vocabulary  # the adapter declares it
    if kind == "gpt2":
        tokenizer = _byte_level_bpe(reader)
    elif kind == "llama" and gemma:
        tokenizer = _gemma_sentencepiece(reader)
    else:
        raise ModelImportError(
            f"the GGUF tokenizer is of type {kind!r} (architecture {arch!r}); the importer "
            "reads byte-level BPE ('gpt2') and Gemma's SentencePiece vocabularies"
        )
    tokens: list[str] = list(_field(reader, "tokenizer.ggml.tokens"))
    types: list[int] = list(_field(reader, "tokenizer.ggml.token_type") or [])
    specials = [
        AddedToken(tokens[i], special=True, normalized=False)
        for i, kind_of in enumerate(types)
        if kind_of == _CONTROL_TOKEN_TYPE
    ]
    tokenizer.add_special_tokens(specials)

    def token(key: str) -> str | None:
        return _token(reader, tokens, key)

    context = (model_config or {}).get("max_position_embeddings")
    template = _field(reader, "tokenizer.chat_template")
    if template is None and gemma:
        template = GEMMA_CHAT_TEMPLATE  # files converted without one still chat as Gemma does
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": token("tokenizer.ggml.bos_token_id"),
        "eos_token": token("tokenizer.ggml.eos_token_id"),
        "unk_token": token("tokenizer.ggml.unknown_token_id"),
        "pad_token": token("tokenizer.ggml.padding_token_id"),
        "add_bos_token": bool(_field(reader, "tokenizer.ggml.add_bos_token")),
        "clean_up_tokenization_spaces": False,
        "model_max_length": int(context or _field(reader, "llama.context_length") or 2048),
        "chat_template": template,
    }
    return tokenizer, config


def build_tokenizer_files(
    reader: Any, folder: Path, model_config: dict[str, Any] | None = None
) -> None:
    tokenizer, config = build_tokenizer(reader, model_config)
    tokenizer.save(str(Path(folder) / "tokenizer.json"))
    (Path(folder) / "tokenizer_config.json").write_text(
        json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
