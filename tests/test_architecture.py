"""The architecture drawing in docs/architecture.md, checked against the source.

The import graph of ``app/``, ``core/`` and ``tracker_service/`` is read from the
source with ``ast`` (nothing is imported). Every import counts: module level,
inside functions and under ``if TYPE_CHECKING:``. A deferred or type-only import
still ties two modules together, and hiding a circle inside a function only
moves the failure to run time, so the drawing holds for all of them.

Importing ``a.b.c`` also runs ``a/__init__`` and ``a/b/__init__``; those
implicit parent edges are not counted (a package's ``__init__`` re-exporting its
own submodule would otherwise read as a circle with each of them).
``from pkg import name`` counts as an import of ``pkg.name`` when that is a
module, else of ``pkg``.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("app", "core", "tracker_service")

# tracker_service's layers, lowest first (docs/architecture.md, "The tracker").
# A module may import its own layer and any layer below it, never one above.
TRACKER_LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("tracker_service", "tracker_service.errors", "tracker_service.config")),
    ("domain", ("tracker_service.domain",)),
    ("store", ("tracker_service.store", "tracker_service.migrations")),
    ("relay", ("tracker_service.relay",)),
    ("security", ("tracker_service.security",)),
    ("services", ("tracker_service.services",)),
    ("gateway", ("tracker_service.gateway",)),
    ("api", ("tracker_service.api",)),
    ("app", ("tracker_service.app",)),
    ("cli", ("tracker_service.cli",)),
)

# Top-level packages (or third-party roots) a package must never import.
FORBIDDEN_ROOTS: dict[str, tuple[str, ...]] = {
    "tracker_service": ("core", "app", "PySide6"),
    "core": ("app", "PySide6", "fastapi", "starlette", "uvicorn"),
    "app": ("tracker_service",),
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _sources() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found[_module_name(path)] = path
    return found


SOURCES = _sources()


def _imported(module: str, path: Path) -> Iterator[str]:
    """Every module `module` imports, resolved to a dotted name."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                drop = node.level - 1 if is_package else node.level
                base = base[: len(base) - drop] if drop else base
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                yield candidate if candidate in SOURCES else target


def _graph() -> dict[str, set[str]]:
    return {module: set(_imported(module, path)) for module, path in SOURCES.items()}


GRAPH = _graph()


def _cycles(package: str) -> list[list[str]]:
    """Strongly connected components (Tarjan) of more than one module, or self-loops."""
    nodes = [m for m in GRAPH if m == package or m.startswith(package + ".")]
    inside = set(nodes)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:
        # Iterative Tarjan: the graph is deep enough to matter for recursion.
        work = [(start, iter(sorted(GRAPH[start] & inside)))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            advanced = False
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(GRAPH[nxt] & inside))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in GRAPH[node]:
                    found.append(sorted(component))

    for node in sorted(nodes):
        if node not in index:
            visit(node)
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycles(package: str) -> None:
    cycles = _cycles(package)
    assert not cycles, f"{package} has import circles: " + "; ".join(
        " <-> ".join(c) for c in cycles
    )


@pytest.mark.parametrize("package", PACKAGES)
def test_no_forbidden_package_imports(package: str) -> None:
    forbidden = FORBIDDEN_ROOTS[package]
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in GRAPH.items()
        if module == package or module.startswith(package + ".")
        for target in targets
        if target.split(".")[0] in forbidden
    )
    assert not wrong, "\n".join(wrong)


def _layer(module: str) -> int:
    best, best_len = -1, -1
    for rank, (_, prefixes) in enumerate(TRACKER_LAYERS):
        for prefix in prefixes:
            matches = module == prefix or module.startswith(prefix + ".")
            # The bare package name only claims its own __init__.
            if prefix == "tracker_service" and module != prefix:
                matches = False
            if matches and len(prefix) > best_len:
                best, best_len = rank, len(prefix)
    return best


def test_every_tracker_module_has_a_layer() -> None:
    unplaced = sorted(m for m in GRAPH if m.startswith("tracker_service") and _layer(m) < 0)
    assert not unplaced, f"add these to TRACKER_LAYERS and docs/architecture.md: {unplaced}"


def test_tracker_imports_only_downward() -> None:
    upward = []
    for module, targets in sorted(GRAPH.items()):
        if not module.startswith("tracker_service"):
            continue
        for target in sorted(targets):
            if not target.startswith("tracker_service"):
                continue
            here, there = _layer(module), _layer(target)
            if there > here:
                upward.append(
                    f"{module} ({TRACKER_LAYERS[here][0]}) imports {target} "
                    f"({TRACKER_LAYERS[there][0]})"
                )
    assert not upward, "imports against the layering:\n" + "\n".join(upward)


def test_tracker_top_level_stays_small() -> None:
    top = sorted(p.name for p in (ROOT / "tracker_service").glob("*.py"))
    assert len(top) <= 12, f"tracker_service/ has {len(top)} top-level modules: {top}"


def test_the_drawing_names_every_layer() -> None:
    drawing = ROOT.joinpath("docs/architecture.md").read_text("utf-8")
    missing = [
        prefix
        for _, prefixes in TRACKER_LAYERS
        for prefix in prefixes
        if f"`{prefix}`" not in drawing
    ]
    assert not missing, f"docs/architecture.md does not name {missing}"


# The tracker's use cases live in services/: api/ parses, authenticates, calls a service
# and shapes the answer; only its session dependency (api/deps.py, which opens the
# database and hands routes the context) imports the store (docs/architecture.md,
# "The tracker").
API_STORE_GATE = "tracker_service.api.deps"


def test_api_reaches_the_store_only_through_its_session_dependency() -> None:
    store = "tracker_service.store"
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in GRAPH.items()
        if module.startswith("tracker_service.api") and module != API_STORE_GATE
        for target in targets
        if target == store or target.startswith(store + ".")
    )
    assert not wrong, "call a service (tracker_service/services/) instead:\n" + "\n".join(wrong)


def test_the_api_store_rule_sees_the_session_dependency() -> None:
    # Guards the rule itself: were the gate misnamed, the test above would pass vacuously.
    assert any(t.startswith("tracker_service.store") for t in GRAPH[API_STORE_GATE])


# core/ and app/ (docs/architecture.md, "The node" and "The app"): modules a part of
# the package must never import. A key is a module prefix; each value a prefix it may
# not reach. Matching takes the whole dotted name or a dotted prefix of it.
INNER_FORBIDDEN: dict[str, tuple[str, ...]] = {
    # the one error tree imports nothing from core
    "core.errors": ("core.",),
    # the model code stands alone
    "core.runtime": (
        "core.node",
        "core.jobs",
        "core.dataplane",
        "core.doctor",
        "core.network",
        "core.models",
    ),
    "core.dataplane": ("core.node", "core.doctor", "core.network.tracker_client", "core.jobs"),
    # proving a computer never reaches up into the node or the jobs executor; only its
    # serving check (core.doctor.serving_check) starts the data plane
    "core.doctor": ("core.node", "core.jobs"),
    "core.doctor.checkup": ("core.dataplane",),
    "core.doctor.probe": ("core.dataplane",),
    "core.doctor.admission_gate": ("core.dataplane",),
    "core.doctor.placement_advice": ("core.dataplane",),
    "core.jobs": ("core.node", "core.dataplane"),
    # the GUI runs the node as a child: it never loads the node, the demo or torch
    "app.ui": ("app.cli", "app.demo", "core.node", "torch"),
    "app.demo": ("app.cli",),
}


def _within(module: str, prefix: str) -> bool:
    if prefix.endswith("."):
        return module.startswith(prefix)
    return module == prefix or module.startswith(prefix + ".")


@pytest.mark.parametrize("part", sorted(INNER_FORBIDDEN))
def test_core_and_app_parts_import_only_what_the_drawing_allows(part: str) -> None:
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in GRAPH.items()
        if _within(module, part)
        for target in targets
        for banned in INNER_FORBIDDEN[part]
        if _within(target, banned) and not _within(target, part)
    )
    assert not wrong, "\n".join(wrong)


def test_nothing_in_core_imports_the_node_lifecycle() -> None:
    """core.node is the top: only app.cli (and core.node itself) import it."""
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in GRAPH.items()
        if module.startswith("core.") and not _within(module, "core.node")
        for target in targets
        if _within(target, "core.node")
    )
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("package", PACKAGES)
def test_the_product_holds_no_test_switch(package: str) -> None:
    """No environment variable of the tests' (``MESHNET_TEST_*``) is read by the product:
    liars and fakes are injected from the test side (tests/support/lies)."""
    found = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / package).rglob("*.py"))
        if "MESHNET_TEST" in path.read_text(encoding="utf-8")
    ]
    assert found == []


# core/ by responsibility (docs/architecture.md, "The node").
CORE_TOP_LEVEL_LIMIT = 10


def test_core_top_level_stays_small() -> None:
    """Counted with __init__.py: everything else lives in a package with a floor plan."""
    top = sorted(p.name for p in (ROOT / "core").glob("*.py"))
    assert len(top) <= CORE_TOP_LEVEL_LIMIT, f"core/ has {len(top)} top-level modules: {top}"


def _core_names() -> dict[str, list[str]]:
    """Each module or package name in core/ (underscores dropped, so ``data_plane.py``
    and ``dataplane/`` are one name) -> where it is."""
    names: dict[str, list[str]] = {}
    for path in sorted((ROOT / "core").rglob("*")):
        if "__pycache__" in path.parts or path == ROOT / "core":
            continue
        if path.is_dir() and (path / "__init__.py").exists():
            name = path.name
        elif path.suffix == ".py" and path.name != "__init__.py":
            name = path.stem
        else:
            continue
        names.setdefault(name.replace("_", ""), []).append(str(path.relative_to(ROOT)))
    return names


def test_no_two_core_modules_share_a_name() -> None:
    """A name says which is which: no module name twice, and never a package's name."""
    twice = {name: where for name, where in _core_names().items() if len(where) > 1}
    assert twice == {}, f"rename so that each says which it is: {twice}"


def _core_error_names() -> set[str]:
    """The exception classes core/errors.py defines (read from the source)."""
    tree = ast.parse((ROOT / "core" / "errors.py").read_text("utf-8"))
    return {n.name for n in tree.body if isinstance(n, ast.ClassDef)}


def _is_exception_base(base: ast.expr, core_errors: set[str]) -> bool:
    name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
    builtin = getattr(builtins, name, None)
    is_builtin_exception = isinstance(builtin, type) and issubclass(builtin, BaseException)
    return name in core_errors or is_builtin_exception


def test_core_exceptions_are_defined_in_core_errors_only() -> None:
    """core's exception tree has one home; a class anywhere else that derives from an
    exception (core's or a builtin one) is a stray (tests/core/test_error_tree.py checks
    the imported classes too)."""
    core_errors = _core_error_names()
    strays = sorted(
        f"{module}.{node.name}"
        for module, path in SOURCES.items()
        if _within(module, "core") and module != "core.errors"
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
        if isinstance(node, ast.ClassDef)
        and any(_is_exception_base(base, core_errors) for base in node.bases)
    )
    assert strays == [], f"define these in core/errors.py: {strays}"


def test_core_exceptions_are_imported_from_core_errors() -> None:
    """Nothing re-exports an exception: app, core, tests and benchmarks name its home."""
    core_errors = _core_error_names()
    wrong = []
    for folder in ("app", "core", "tests", "benchmarks", "installers"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text("utf-8"))):
                if (
                    isinstance(node, ast.ImportFrom)
                    and (node.module or "").startswith("core")
                    and node.module != "core.errors"
                ):
                    wrong += [
                        f"{path.relative_to(ROOT)}: from {node.module} import {alias.name}"
                        for alias in node.names
                        if alias.name in core_errors
                    ]
    assert wrong == [], "import these from core.errors:\n" + "\n".join(wrong)


def test_app_exceptions_are_defined_in_app_errors_only() -> None:
    """The app's exception tree has one home too (app/errors.py)."""
    known = _core_error_names() | {
        n.name
        for n in ast.parse((ROOT / "app" / "errors.py").read_text("utf-8")).body
        if isinstance(n, ast.ClassDef)
    }
    strays = sorted(
        f"{module}.{node.name}"
        for module, path in SOURCES.items()
        if _within(module, "app") and module != "app.errors"
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
        if isinstance(node, ast.ClassDef)
        and any(_is_exception_base(base, known) for base in node.bases)
    )
    assert strays == [], f"define these in app/errors.py: {strays}"


def test_the_app_status_model_uses_the_node_state_types() -> None:
    """app/status_model.py reads the node's states and gates from core.events, and spells
    out no collection of them as strings of its own."""
    events = ast.parse((ROOT / "core" / "events.py").read_text("utf-8"))
    words = {
        node.value.value
        for cls in events.body
        if isinstance(cls, ast.ClassDef) and cls.name in {"NodeState", "Gate"}
        for node in ast.walk(cls)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
    }
    assert "core.events" in GRAPH["app.status_model"]
    model = ast.parse(SOURCES["app.status_model"].read_text("utf-8"))
    retyped = sorted(
        f"line {node.lineno}"
        for node in ast.walk(model)
        if isinstance(node, ast.Tuple | ast.List | ast.Set | ast.Dict)
        and sum(
            isinstance(item, ast.Constant) and item.value in words
            for item in (node.keys if isinstance(node, ast.Dict) else node.elts)
        )
        >= 2
    )
    assert retyped == [], f"app/status_model.py retypes core.events' states or gates at {retyped}"


def _module_level_imports(path: Path) -> Iterator[str]:
    """What importing ``module`` loads at once: imports outside any function body."""
    tree = ast.parse(path.read_text("utf-8"))
    deferred = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        for inner in ast.walk(node)
        if inner is not node
    }
    for node in ast.walk(tree):
        if id(node) in deferred or not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        else:
            base = node.module or ""
            yield from (f"{base}.{alias.name}" for alias in node.names)
            yield base


def test_screenshot_samples_load_only_for_a_screenshot() -> None:
    """A ``samples`` module (canned data, a mock tracker) is imported inside the
    screenshot hook that uses it, never when a production screen is loaded."""
    wrong = sorted(
        f"{module} imports {target}"
        for module, path in SOURCES.items()
        if module.startswith("app.") and not module.endswith(".samples")
        for target in _module_level_imports(path)
        if target.split(".")[-1] == "samples" or ".samples." in target
    )
    assert wrong == [], "\n".join(wrong)
