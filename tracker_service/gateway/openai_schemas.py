"""Request bodies of the OpenAI-compatible gateway (``/v1/chat/completions``, ``/v1/completions``).

Only what the gateway honours is declared; other fields OpenAI clients send
are either harmless and ignored (``IGNORED``) or refused with a 400 naming
the parameter, so a client never believes a setting took effect when it did not.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

MAX_STOP = 4
# OpenAI's legacy completions API stops at 16 tokens when max_tokens is not given.
COMPLETIONS_DEFAULT_MAX_TOKENS = 16
# Sent by common clients with neutral values; accepted and ignored.
IGNORED = frozenset({"user", "metadata", "store", "service_tier"})
# Accepted only at the value that means "off".
NEUTRAL: dict[str, Any] = {
    "presence_penalty": 0,
    "frequency_penalty": 0,
    "logprobs": False,
    "echo": False,
    "logit_bias": {},
    "best_of": 1,
    "parallel_tool_calls": None,
    "tools": [],
    "tool_choice": "none",
    "response_format": {"type": "text"},
    "suffix": None,
    "top_logprobs": 0,
}


# Fields with a default that some clients send as an explicit null, which OpenAI
# reads as "not given" (the optional ones already take None).
NULL_MEANS_DEFAULT = frozenset({"temperature", "top_p", "n", "stream"})


class StreamOptions(BaseModel):
    include_usage: bool = False


class _Sampling(BaseModel):
    model_config = ConfigDict(extra="allow")

    model: str = Field(min_length=1, max_length=600)
    temperature: float = Field(default=1.0, ge=0.0, le=2.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    seed: int | None = Field(default=None, ge=0, le=2**63 - 1)
    stop: str | list[str] | None = None
    n: int = 1
    stream: bool = False
    stream_options: StreamOptions | None = None

    @model_validator(mode="before")
    @classmethod
    def _null_is_default(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if v is not None or k not in NULL_MEANS_DEFAULT}
        return data

    def default_max_tokens(self, configured: int) -> int:
        """The token limit when the request names none: the tracker's setting."""
        return configured

    @field_validator("n")
    @classmethod
    def _one_choice(cls, value: int) -> int:
        if value != 1:
            raise ValueError("only n=1 is supported: send one request per answer")
        return value

    @field_validator("stop")
    @classmethod
    def _stops(cls, value: str | list[str] | None) -> str | list[str] | None:
        if isinstance(value, list) and len(value) > MAX_STOP:
            raise ValueError(f"at most {MAX_STOP} stop sequences")
        return value

    @property
    def stop_list(self) -> list[str]:
        if self.stop is None:
            return []
        return [self.stop] if isinstance(self.stop, str) else list(self.stop)

    @property
    def token_limit(self) -> int | None:
        return self.max_completion_tokens or self.max_tokens

    @property
    def include_usage(self) -> bool:
        return bool(self.stream_options and self.stream_options.include_usage)

    def unsupported(self) -> list[str]:
        """Extra parameters this gateway cannot honour (their names)."""
        refused = []
        for name, value in (self.model_extra or {}).items():
            if name in IGNORED:
                continue
            if name in NEUTRAL and value in (NEUTRAL[name], None):
                continue
            refused.append(name)
        return sorted(refused)


class TextPart(BaseModel):
    type: Literal["text"]
    text: str


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")

    role: Literal["system", "developer", "user", "assistant"]
    content: str | list[TextPart] | None = None
    name: str | None = None

    @field_validator("content", mode="before")
    @classmethod
    def _text_parts_only(cls, value: Any) -> Any:
        # Said in one sentence; the str | list union would list one complaint per branch.
        if isinstance(value, list):
            kinds = sorted({str(p.get("type")) for p in value if isinstance(p, dict)} - {"text"})
            if kinds:
                raise ValueError(
                    f"content parts of type {', '.join(kinds)} are not supported: "
                    "this gateway serves text models, so send text parts only"
                )
        return value

    @model_validator(mode="after")
    def _content_given(self) -> ChatMessage:
        # OpenAI lets only an assistant turn (one carrying tool calls) omit its content;
        # a user or system turn without it would be answered as if it were empty.
        if self.content is None and self.role != "assistant":
            raise ValueError(f"a {self.role} message needs its content")
        return self

    def text(self) -> str:
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return "".join(part.text for part in self.content)


class ChatCompletionCreate(_Sampling):
    messages: list[ChatMessage] = Field(min_length=1)


class CompletionCreate(_Sampling):
    prompt: str | list[str] | list[int]

    def default_max_tokens(self, configured: int) -> int:
        """16, as OpenAI's legacy completions API, whatever the chat default is."""
        return COMPLETIONS_DEFAULT_MAX_TOKENS

    @field_validator("prompt")
    @classmethod
    def _single(cls, value: str | list[str] | list[int]) -> str | list[str] | list[int]:
        if isinstance(value, list) and value and isinstance(value[0], str) and len(value) != 1:
            raise ValueError("one prompt per request (n=1); send the others separately")
        if isinstance(value, list) and not value:
            raise ValueError("the prompt is empty")
        return value
