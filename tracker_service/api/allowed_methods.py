"""What a 405's ``Allow`` header lists: every method the resource takes, not one route's.

Starlette names only the first route whose path matched, so a path served by two
routes (``GET`` and ``POST /api/v1/jobs``) advertised one method, and a literal
path shadowed by a parameter route (``POST /api/v1/jobs/claim`` against
``GET /api/v1/jobs/{job_id}``) advertised the other route's. RFC 9110 asks for
the resource's whole set. The OpenAPI document is where the resources and their
methods are declared; the most specific template matching the path is the
resource: the one with the most literal characters (``/api/v1/jobs/claim``
beats ``/api/v1/jobs/{job_id}``). A parameter may span segments here, as a
``{key:path}`` route does (the document drops the ``:path``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_PARAMETER = re.compile(r"\\\{[^}]*\\\}")
HTTP_METHODS = ("get", "put", "post", "delete", "patch", "options", "head", "trace")


def _template_regex(template: str) -> re.Pattern[str]:
    return re.compile("^" + _PARAMETER.sub(".+", re.escape(template)) + "$")


def _literal_length(template: str) -> int:
    return len(re.sub(r"\{[^}]*\}", "", template))


def allowed_methods(document: Mapping[str, Any], path: str) -> list[str]:
    """Sorted upper-case methods the document declares for ``path`` ([] when none matches).

    HEAD is listed with GET, as Starlette answers it for every GET route."""
    best: int | None = None
    methods: set[str] = set()
    for template, item in document.get("paths", {}).items():
        if not _template_regex(template).match(path):
            continue
        declared = {m.upper() for m in item if m in HTTP_METHODS}
        literal = _literal_length(template)
        if best is None or literal > best:
            best, methods = literal, declared
        elif literal == best:
            methods |= declared
    if "GET" in methods:
        methods.add("HEAD")
    return sorted(methods)
