"""Request bodies of the OpenAI-compatible gateway (``/v1/chat/completions``, ``/v1/completions``).

Honoured besides the basics: ``n`` (up to 8), ``logprobs``/``top_logprobs`` (up to
20), the penalties, ``logit_bias``, ``response_format`` and ``tools``/``tool_choice``
(with ``tool`` messages in the conversation).

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
    "echo": False,
    "best_of": 1,
    "suffix": None,
}
MAX_N = 8  # choices per request, decoded together as concurrent route sessions
MAX_TOP_LOGPROBS = 20  # the most a last hop returns (docs/wire.md)


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
    # Anthropic's and Ollama's top_k (and vLLM's extension of this API); 0 or none: off
    top_k: int | None = Field(default=None, ge=0)
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    seed: int | None = Field(default=None, ge=0, le=2**63 - 1)
    stop: str | list[str] | None = None
    n: int = Field(default=1, ge=1, le=MAX_N)
    stream: bool = False
    stream_options: StreamOptions | None = None
    presence_penalty: float | None = Field(default=None, ge=-2.0, le=2.0)
    frequency_penalty: float | None = Field(default=None, ge=-2.0, le=2.0)
    logit_bias: dict[str, float] | None = None
    # MeshNet's extension (the openai client's extra_body): false turns speculative
    # decoding off for this request, e.g. to compare speeds; the answer is the same.
    speculative: bool = True
    # false runs this request's routes as stars, not chains (docs/wire.md#chained-hops)
    chain: bool = True

    @model_validator(mode="before")
    @classmethod
    def _null_is_default(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if v is not None or k not in NULL_MEANS_DEFAULT}
        return data

    def default_max_tokens(self, configured: int) -> int:
        """The token limit when the request names none: the tracker's setting."""
        return configured

    @field_validator("logit_bias")
    @classmethod
    def _bias(cls, value: dict[str, float] | None) -> dict[str, float] | None:
        for key, bias in (value or {}).items():
            if not key.isdigit():
                raise ValueError(f"logit_bias keys are token ids as strings; {key!r} is not one")
            if not -100 <= bias <= 100:
                raise ValueError(f"logit_bias values are in [-100, 100]; {key} has {bias}")
        return value

    @property
    def bias(self) -> dict[int, float]:
        return {int(k): float(v) for k, v in (self.logit_bias or {}).items()}

    @property
    def top_logprob_count(self) -> int:
        """How many alternatives each token's log-prob entry lists."""
        return 0

    @property
    def wants_logprobs(self) -> bool:
        return False

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


class FunctionCallIn(BaseModel):
    name: str
    arguments: str = "{}"


class ToolCallIn(BaseModel):
    """A tool call of an earlier assistant turn, as the client sends it back."""

    model_config = ConfigDict(extra="ignore")

    id: str | None = None
    type: Literal["function"] = "function"
    function: FunctionCallIn


class FunctionDef(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.description:
            out["description"] = self.description
        out["parameters"] = self.parameters or {"type": "object", "properties": {}}
        return out


class Tool(BaseModel):
    type: Literal["function"]
    function: FunctionDef


class NamedFunction(BaseModel):
    name: str


class NamedToolChoice(BaseModel):
    type: Literal["function"]
    function: NamedFunction


class JsonSchemaFormat(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str = Field(min_length=1, max_length=64)
    description: str | None = None
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    strict: bool | None = None


class ResponseFormat(BaseModel):
    type: Literal["text", "json_object", "json_schema"]
    json_schema: JsonSchemaFormat | None = None

    @model_validator(mode="after")
    def _schema_given(self) -> ResponseFormat:
        if self.type == "json_schema" and self.json_schema is None:
            raise ValueError('a "json_schema" response_format needs its json_schema object')
        return self


class TextPart(BaseModel):
    type: Literal["text"]
    text: str


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[TextPart] | None = None
    name: str | None = None
    tool_calls: list[ToolCallIn] | None = None
    tool_call_id: str | None = None

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
        if self.role == "tool" and not self.tool_call_id:
            raise ValueError("a tool message needs the tool_call_id it answers")
        return self

    def to_template(self) -> dict[str, Any]:
        """The message as chat templates (and the tool preamble) read it."""
        out: dict[str, Any] = {"role": self.role, "content": self.text()}
        if self.tool_calls:
            out["tool_calls"] = [c.model_dump() for c in self.tool_calls]
        if self.tool_call_id:
            out["tool_call_id"] = self.tool_call_id
        if self.name:
            out["name"] = self.name
        return out

    def text(self) -> str:
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return "".join(part.text for part in self.content)


class ChatCompletionCreate(_Sampling):
    messages: list[ChatMessage] = Field(min_length=1)
    logprobs: bool | None = None
    top_logprobs: int | None = Field(default=None, ge=0, le=MAX_TOP_LOGPROBS)
    response_format: ResponseFormat | None = None
    tools: list[Tool] | None = None
    tool_choice: Literal["none", "auto", "required"] | NamedToolChoice | None = None
    parallel_tool_calls: bool | None = None

    @model_validator(mode="after")
    def _consistent(self) -> ChatCompletionCreate:
        if self.top_logprobs and not self.logprobs:
            raise ValueError("top_logprobs needs logprobs: true")
        if isinstance(self.tool_choice, NamedToolChoice):
            names = [t.function.name for t in self.tools or []]
            if self.tool_choice.function.name not in names:
                raise ValueError(
                    f"tool_choice names '{self.tool_choice.function.name}', which is not "
                    f"among tools ({', '.join(names) or 'none given'})"
                )
        elif self.tool_choice == "required" and not self.tools:
            raise ValueError('tool_choice "required" needs tools')
        if self.tools and self.response_format and self.response_format.type != "text":
            raise ValueError("send either tools or a JSON response_format, not both")
        return self

    @property
    def top_logprob_count(self) -> int:
        return self.top_logprobs or 0

    @property
    def wants_logprobs(self) -> bool:
        return bool(self.logprobs)

    @property
    def functions(self) -> list[dict[str, Any]]:
        """The offered functions the answer may call (none when tool_choice is "none")."""
        if not self.tools or self.tool_choice == "none":
            return []
        return [t.function.to_json() for t in self.tools]

    @property
    def forced_functions(self) -> list[dict[str, Any]]:
        """Functions one of which must be called (under a grammar); [] when free."""
        if isinstance(self.tool_choice, NamedToolChoice):
            name = self.tool_choice.function.name
            return [f for f in self.functions if f["name"] == name]
        return self.functions if self.tool_choice == "required" else []


class CompletionCreate(_Sampling):
    prompt: str | list[str] | list[int]
    logprobs: int | None = Field(default=None, ge=0, le=MAX_TOP_LOGPROBS)

    @property
    def top_logprob_count(self) -> int:
        return self.logprobs or 0

    @property
    def wants_logprobs(self) -> bool:
        return self.logprobs is not None

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
