"""The model's chat template, rendered in a sandboxed Jinja environment.

A template is code shipped with a model; the tracker renders it for every
chat request, so it runs in ``ImmutableSandboxedEnvironment`` (no attribute
access to internals, no mutation of the messages) with the few helpers
Hugging Face templates expect (``raise_exception``, ``strftime_now``).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

import jinja2
import jinja2.sandbox

from tracker_service.errors import TemplateError


def _raise(message: str) -> NoReturn:
    raise TemplateError(message)


def _strftime_now(fmt: str) -> str:
    return datetime.datetime.now(datetime.UTC).strftime(fmt)


class ChatTemplate:
    def __init__(self, source: str | None, *, bos_token: str = "", eos_token: str = "") -> None:
        environment = jinja2.sandbox.ImmutableSandboxedEnvironment(
            trim_blocks=True, lstrip_blocks=True, undefined=jinja2.Undefined
        )
        environment.globals["raise_exception"] = _raise
        environment.globals["strftime_now"] = _strftime_now
        try:
            self._template = environment.from_string(source) if source else None
        except jinja2.TemplateError as exc:
            raise TemplateError(f"the model's chat template does not compile: {exc}") from exc
        self.source = source
        self.bos_token = bos_token
        self.eos_token = eos_token

    @property
    def present(self) -> bool:
        return self._template is not None

    def render(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> str:
        """The prompt text for `messages`, ending where the assistant's answer begins."""
        if self._template is None:
            # A base model without a template: the messages' text, one per line.
            return "\n".join(str(m.get("content") or "") for m in messages) + "\n"
        try:
            return self._template.render(
                messages=[dict(m) for m in messages],
                add_generation_prompt=True,
                tools=[dict(t) for t in tools] if tools else None,
                bos_token=self.bos_token,
                eos_token=self.eos_token,
            )
        except TemplateError:
            raise
        except jinja2.TemplateError as exc:
            raise TemplateError(
                f"the model's chat template failed on these messages: {exc}"
            ) from exc
