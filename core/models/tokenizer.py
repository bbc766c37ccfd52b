"""The tokenizer a client needs: ``tokenizer.json`` plus the model's chat template.

Nodes never tokenize for users (the first hop takes token ids); the CLI, the
demo and the tracker's gateway do, from the same files the model folder holds.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import jinja2.sandbox
from tokenizers import Tokenizer

from core.errors import ModelError


class ChatTokenizer:
    def __init__(
        self,
        tokenizer: Tokenizer,
        config: Mapping[str, Any],
        extra_eos_ids: frozenset[int] = frozenset(),
    ) -> None:
        self._tokenizer = tokenizer
        self._config = dict(config)
        # generation_config.json may list more stops (Gemma's <end_of_turn>, Llama 3's <|eot_id|>)
        self._extra_eos_ids = extra_eos_ids
        template = self._config.get("chat_template")
        environment = jinja2.sandbox.ImmutableSandboxedEnvironment(
            trim_blocks=True, lstrip_blocks=True
        )
        self._template = environment.from_string(template) if template else None

    @classmethod
    def from_folder(cls, folder: Path) -> ChatTokenizer:
        folder = Path(folder)
        try:
            tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
            config_path = folder / "tokenizer_config.json"
            config = json.loads(config_path.read_text("utf-8")) if config_path.is_file() else {}
            generation_path = folder / "generation_config.json"
            generation = (
                json.loads(generation_path.read_text("utf-8")) if generation_path.is_file() else {}
            )
        except (OSError, ValueError, Exception) as exc:
            raise ModelError(f"cannot load the tokenizer in {folder}: {exc}") from exc
        raw = generation.get("eos_token_id") if isinstance(generation, dict) else None
        listed = raw if isinstance(raw, list) else [raw]
        extra = frozenset(i for i in listed if isinstance(i, int) and not isinstance(i, bool))
        return cls(tokenizer, config, extra)

    def encode(self, text: str) -> list[int]:
        return list(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def decode(self, ids: Sequence[int], *, skip_special_tokens: bool = True) -> str:
        return str(self._tokenizer.decode(list(ids), skip_special_tokens=skip_special_tokens))

    def token_id(self, token: str | None) -> int | None:
        return None if token is None else self._tokenizer.token_to_id(token)

    @property
    def eos_token_ids(self) -> frozenset[int]:
        ids = {self.token_id(self._config.get("eos_token"))}
        return frozenset(i for i in ids if i is not None) | self._extra_eos_ids

    def apply_chat_template(
        self, messages: Sequence[Mapping[str, str]], *, add_generation_prompt: bool = True
    ) -> str:
        if self._template is None:
            # No template: plain concatenation keeps base models usable.
            return "\n".join(m["content"] for m in messages) + "\n"
        return self._template.render(
            messages=list(messages),
            add_generation_prompt=add_generation_prompt,
            bos_token=self._config.get("bos_token") or "",
            eos_token=self._config.get("eos_token") or "",
        )

    def encode_chat(self, messages: Sequence[Mapping[str, str]]) -> list[int]:
        return self.encode(self.apply_chat_template(messages))
