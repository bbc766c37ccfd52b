"""Find every reason code the code emits, by reading its syntax tree.

A reason code is a kebab-case string a refusal carries. The scan looks where
the project puts them: ``reason=`` arguments, ``reason`` class attributes,
``{"reason": ...}`` objects, upper-case constants holding a kebab-case string,
the reason argument of ``refuse``/``refusal_response`` and of the refusal
exceptions (``*Refusal``, ``*Refused``, ``*Limited``), and the OpenAI-shape
``code`` of the gateway's errors. Used by ``tests/test_docs_references.py`` so
``docs/wire.md`` cannot fall behind the code.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("core", "tracker_service")

KEBAB = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)+")
SNAKE = re.compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)+")
# Single-word reasons are found only where the syntax says "reason".
WORD = re.compile(r"[a-z][a-z0-9]*")

# Upper-case kebab-case constants that are names of things, not reasons.
NOT_REASON_SUFFIXES = ("_DOMAIN", "_PATH", "_ENV", "_SERVICE", "_ID")
# An event source (core/events.py) and a quantization name (core/runtime/quant.py).
NOT_REASON_NAMES = frozenset({"DATA_PLANE", "INT8_PER_CHANNEL"})
# A refusal exception's first argument is its reason.
REFUSAL_CLASS = re.compile(r".*(Refusal|Refused|Limited|Failed|Failure)$")
# Refusal helpers and the position of their reason argument: (status, reason, message),
# and the relay's handshake denial (websocket, status, reason, message).
REFUSE_HELPERS = {"refuse": 1, "refusal_response": 1, "_refusal": 1, "_deny": 2}


@dataclass(frozen=True)
class Found:
    code: str
    path: str
    line: int


def _literal(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _call_name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _is_reason_constant(name: str) -> bool:
    return (
        name.isupper() and name not in NOT_REASON_NAMES and not name.endswith(NOT_REASON_SUFFIXES)
    )


def _codes_in(tree: ast.AST) -> Iterator[tuple[str, int]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                value = _literal(keyword.value)
                if (
                    keyword.arg == "reason"
                    and value
                    and (WORD.fullmatch(value) or KEBAB.fullmatch(value))
                ):
                    yield value, node.lineno
                if keyword.arg == "code" and value and SNAKE.fullmatch(value):
                    yield value, node.lineno
            name = _call_name(node)
            if name in REFUSE_HELPERS:
                position = REFUSE_HELPERS[name]
                arguments = node.args[position : position + 1]
            elif REFUSAL_CLASS.match(name):
                arguments = node.args
            else:
                arguments = []
            for argument in arguments:
                value = _literal(argument)
                if value and KEBAB.fullmatch(value):
                    yield value, node.lineno
        elif isinstance(node, ast.Dict):
            for key, item in zip(node.keys, node.values, strict=True):
                value = _literal(item)
                if _literal(key) == "reason" and value and KEBAB.fullmatch(value):
                    yield value, node.lineno
        elif isinstance(node, ast.ClassDef):
            # class Refusal(GatewayError, status_code=401, code="invalid_api_key"): ...
            for keyword in node.keywords:
                value = _literal(keyword.value)
                if keyword.arg == "code" and value and SNAKE.fullmatch(value):
                    yield value, node.lineno
                if keyword.arg == "reason" and value and KEBAB.fullmatch(value):
                    yield value, node.lineno
            for statement in node.body:
                if not isinstance(statement, ast.Assign):
                    continue
                value = _literal(statement.value)
                for target in statement.targets:
                    if not (isinstance(target, ast.Name) and value):
                        continue
                    if target.id == "reason" and WORD.fullmatch(value.replace("-", "")):
                        yield value, statement.lineno
                    if target.id == "code" and SNAKE.fullmatch(value):
                        yield value, statement.lineno
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = _literal(node.value)
            if not value:
                continue
            for target in targets:
                if not isinstance(target, ast.Name) or not _is_reason_constant(target.id):
                    continue
                if KEBAB.fullmatch(value) or (
                    target.id.startswith("REASON_") and WORD.fullmatch(value)
                ):
                    yield value, node.lineno


def emitted_reason_codes(root: Path = ROOT) -> list[Found]:
    """Every reason code in ``core/`` and ``tracker_service/``, with where it is."""
    found: list[Found] = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            relative = path.relative_to(root).as_posix()
            found.extend(Found(code, relative, line) for code, line in _codes_in(tree))
    return found
