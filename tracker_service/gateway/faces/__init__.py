"""The gateway's faces: each API a client may speak, translated onto the one internal request.

The gateway has one generation request (:class:`~tracker_service.gateway.openai_schemas.
ChatCompletionCreate`, the chat-completions body) and one way to serve it
(:meth:`Gateway.prepare`, then :mod:`.common`'s :func:`~.common.collect` or
:func:`~.common.events`): routes, failover, speculative steps, credits, key limits,
audits, sampling, grammars and tool parsing all live behind it. A face is one module
that only translates:

- its request body into the internal request (``to_internal``), refusing with a 400
  naming the field whatever it cannot honour;
- a whole answer (:class:`~.common.Outcome`) into its response, and the stream of
  :class:`~.common.Event` into its own event sequence;
- a refusal into its own error shape (``error_body``).

    faces/openai_responses.py   POST /v1/responses (response_store.py: previous_response_id)
    faces/anthropic_messages.py POST /v1/messages, /v1/messages/count_tokens
    faces/ollama.py             /api/chat, /api/generate, /api/tags, /api/show, /api/version

A fifth API is one more module here, a route module in ``api/routes/`` and an entry in
:data:`ERROR_SHAPES`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tracker_service.gateway.faces import anthropic_messages, ollama

# (status, reason code, sentence, param) -> the body a client of that API expects
ErrorBody = Callable[[int, str, str, str | None], dict[str, Any]]


@dataclass(frozen=True)
class ErrorShape:
    owns: Callable[[str], bool]  # is this path the face's?
    body: ErrorBody
    schema: dict[str, Any]  # the body's JSON schema, for the OpenAPI document


# Which paths answer refusals in which API's shape (the rest of /v1 is OpenAI's).
ERROR_SHAPES: list[ErrorShape] = [
    ErrorShape(
        anthropic_messages.owns_path, anthropic_messages.error_body, anthropic_messages.ERROR_SCHEMA
    ),
    ErrorShape(ollama.owns_path, ollama.error_body, ollama.ERROR_SCHEMA),
]


def error_shape_of(path: str) -> ErrorShape | None:
    for shape in ERROR_SHAPES:
        if shape.owns(path):
            return shape
    return None


def error_shape(path: str) -> ErrorBody | None:
    shape = error_shape_of(path)
    return shape.body if shape is not None else None


def apis_on(ollama_port: int | None) -> list[str]:
    """The APIs this tracker answers, in words (the status page lists them)."""
    ollama_where = f"/api/chat, also on port {ollama_port}" if ollama_port else "/api/chat"
    return [
        "OpenAI chat and completions (/v1/chat/completions)",
        "OpenAI Responses (/v1/responses)",
        "Anthropic Messages (/v1/messages)",
        f"Ollama ({ollama_where})",
    ]
