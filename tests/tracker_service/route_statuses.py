"""Which HTTP statuses a tracker route can answer with, read from its code.

A static walk, so that a refusal added to a route (or to anything it calls)
without being documented in the OpenAPI document fails a test instead of a
client. For each route it starts at the endpoint and its FastAPI dependencies
and follows every tracker function they name (calls, and functions passed on,
e.g. to ``run_in_threadpool``), collecting:

- ``refuse(S, ...)``, ``refusal_response(S, ...)``, ``HTTPException(S, ...)``
  and any call of a tracker function whose parameter ``status_code`` gets S;
- the construction of an exception class that carries ``status_code``
  (``TrackerRefusal``, ``AuthRefused``, ``GatewayError`` and subclasses,
  ``ArtifactRefusal``): the ``status_code`` argument, else the class's own;
- ``status_code=S`` of a response object.

S is evaluated when it is a literal, a module constant, ``a if c else b``, a
module dict's ``.get(k, default)`` / ``[k]``, or ``exc.status_code`` of an
``except T as exc`` (the statuses of ``T`` built on the way, else those its
subclasses declare). Methods called on objects are not followed, so the walk
can miss a status but never invents one the code does not name.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from types import FunctionType, ModuleType
from typing import Any

from fastapi.routing import APIRoute

PACKAGE = "tracker_service"
STATUS_HELPERS = frozenset({"refuse", "refusal_response", "HTTPException"})
RESPONSE_CLASSES = frozenset(
    {"Response", "JSONResponse", "FileResponse", "StreamingResponse", "HTMLResponse"}
)


@dataclass
class Walk:
    """What one route's walk found."""

    statuses: set[int] = field(default_factory=set)
    # Exception classes whose caught instance's ``status_code`` is answered.
    relayed: set[type] = field(default_factory=set)
    built: dict[type, set[int]] = field(default_factory=dict)
    seen: set[Callable[..., Any]] = field(default_factory=set)


def _ours(obj: object) -> bool:
    return getattr(obj, "__module__", "").startswith(PACKAGE)


def _resolve(node: ast.expr, scope: dict[str, Any]) -> object | None:
    """A Name or dotted Attribute looked up in a module's globals (no calls made)."""
    if isinstance(node, ast.Name):
        return scope.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, scope)
        if isinstance(base, ModuleType | type):
            return getattr(base, node.attr, None)
    return None


def _status_attr(cls: type) -> int | None:
    value = getattr(cls, "status_code", None)
    return value if isinstance(value, int) else None


def _declared(cls: type) -> set[int]:
    """Statuses a caught `cls` may carry: its subclasses' own (the base's if none)."""
    leaves = [c for c in _subclasses(cls) if not c.__subclasses__()]
    found = {s for c in leaves or [cls] if (s := _status_attr(c)) is not None}
    return found


def _subclasses(cls: type) -> list[type]:
    out: list[type] = []
    direct: list[type] = cls.__subclasses__()
    for sub in direct:
        out.append(sub)
        out.extend(_subclasses(sub))
    return out


class _FunctionWalker:
    def __init__(self, walk: Walk, function: Callable[..., Any]) -> None:
        self.walk = walk
        self.function = function
        self.scope: dict[str, Any] = getattr(function, "__globals__", {})
        self.caught: dict[str, set[type]] = {}

    def run(self) -> list[Callable[..., Any]]:
        try:
            source = textwrap.dedent(inspect.getsource(self.function))
        except (OSError, TypeError):
            return []
        tree = ast.parse(source)
        for handler in ast.walk(tree):
            if isinstance(handler, ast.ExceptHandler) and handler.name and handler.type:
                types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
                for caught in types:
                    cls = _resolve(caught, self.scope)
                    if isinstance(cls, type):
                        self.caught.setdefault(handler.name, set()).add(cls)
        callees: list[Callable[..., Any]] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                self._call(node)
            if isinstance(node, ast.Name | ast.Attribute) and isinstance(node.ctx, ast.Load):
                target = _resolve(node, self.scope)
                if isinstance(target, FunctionType) and _ours(target):
                    callees.append(target)
        return callees

    def _call(self, call: ast.Call) -> None:
        target = _resolve(call.func, self.scope)
        name = (
            call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
        )
        if name in STATUS_HELPERS and call.args:
            self.walk.statuses |= self._evaluate(call.args[0])
        elif name in RESPONSE_CLASSES:
            for keyword in call.keywords:
                if keyword.arg == "status_code":
                    self.walk.statuses |= self._evaluate(keyword.value)
        elif isinstance(target, type) and issubclass(target, BaseException):
            statuses = self._argument(call, target.__init__, skip_self=True)
            if not statuses and (own := _status_attr(target)) is not None:
                statuses = {own}
            if statuses:
                self.walk.built.setdefault(target, set()).update(statuses)
                self.walk.statuses |= statuses
        elif isinstance(target, FunctionType) and _ours(target):
            self.walk.statuses |= self._argument(call, target, skip_self=False)

    def _argument(self, call: ast.Call, function: Any, *, skip_self: bool) -> set[int]:
        """The statuses passed to `function`'s ``status_code`` parameter at this call."""
        try:
            names = list(inspect.signature(function).parameters)
        except (TypeError, ValueError):
            return set()
        if skip_self and names[:1] == ["self"]:
            names = names[1:]
        if "status_code" not in names:
            return set()
        for keyword in call.keywords:
            if keyword.arg == "status_code":
                return self._evaluate(keyword.value)
        index = names.index("status_code")
        if index < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args):
            return self._evaluate(call.args[index])
        default = inspect.signature(function).parameters["status_code"].default
        return {default} if isinstance(default, int) else set()

    def _evaluate(self, node: ast.expr) -> set[int]:
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return {node.value}
        if isinstance(node, ast.IfExp):
            return self._evaluate(node.body) | self._evaluate(node.orelse)
        if isinstance(node, ast.Name | ast.Attribute):
            if (
                isinstance(node, ast.Attribute)
                and node.attr == "status_code"
                and isinstance(node.value, ast.Name)
                and node.value.id in self.caught
            ):
                self.walk.relayed |= self.caught[node.value.id]
                return set()
            value = _resolve(node, self.scope)
            return {value} if isinstance(value, int) and not isinstance(value, bool) else set()
        if isinstance(node, ast.Subscript):
            table = _resolve(node.value, self.scope)
            return _int_values(table)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
        ):
            table = _resolve(node.func.value, self.scope)
            default = self._evaluate(node.args[1]) if len(node.args) > 1 else set()
            return _int_values(table) | default
        return set()


def _int_values(table: object) -> set[int]:
    if not isinstance(table, dict):
        return set()
    return {v for v in table.values() if isinstance(v, int) and not isinstance(v, bool)}


def _entry_points(route: APIRoute, extra: Iterable[Callable[..., Any]]) -> list[Callable[..., Any]]:
    calls: list[Callable[..., Any]] = list(extra)
    pending = [route.dependant]
    while pending:
        dependant = pending.pop()
        if dependant.call is not None:
            calls.append(dependant.call)
        pending.extend(dependant.dependencies)
    return calls


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    route: APIRoute
    dependencies: tuple[Callable[..., Any], ...] = ()


def operations(
    routes: Iterable[object], prefix: str = "", deps: tuple[Any, ...] = ()
) -> list[Operation]:
    """Every documented (method, path) of an app, with the route that answers it.

    Routers included with ``include_router`` are followed through whatever
    wrapper this FastAPI version keeps them in (``original_router``/``routes``).
    """
    found: list[Operation] = []
    for route in routes:
        if isinstance(route, APIRoute):
            if route.include_in_schema:
                for method in sorted(route.methods or ()):
                    found.append(Operation(method, prefix + route.path_format, route, deps))
            continue
        context = getattr(route, "include_context", None)
        inner = getattr(route, "original_router", None)
        if inner is not None:
            extra = tuple(
                d.dependency for d in getattr(context, "dependencies", ()) if d.dependency
            )
            found += operations(inner.routes, prefix + getattr(context, "prefix", ""), deps + extra)
    return found


def route_statuses(operation: Operation) -> set[int]:
    """Every status the walk finds this operation's code can answer with."""
    walk = Walk()
    pending = _entry_points(operation.route, operation.dependencies)
    while pending:
        function = pending.pop()
        if function in walk.seen:
            continue
        walk.seen.add(function)
        pending.extend(_FunctionWalker(walk, function).run())
    for cls in walk.relayed:
        built = set().union(
            *(statuses for built, statuses in walk.built.items() if issubclass(built, cls))
        )
        walk.statuses |= built or _declared(cls)
    return walk.statuses
