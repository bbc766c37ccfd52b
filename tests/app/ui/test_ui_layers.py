"""The layout of app/ui holds: widgets under plumbing under screens, no circles.

Read from the source (every import, also those inside functions), so a new
module that breaks the layering drawn in app/ui/__init__.py fails here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
UI = ROOT / "app" / "ui"
# Put the screens together (the app, and the screenshots: screens and the tray's
# notifications); every other top-level module is plumbing.
COMPOSERS = {"app.ui.main", "app.ui.screenshots", "app.ui.screenshot_notifications"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _ui_imports() -> dict[str, set[str]]:
    """Each app.ui module and the app.ui modules it imports."""
    modules = {_module_name(path): path for path in UI.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                candidates = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                candidates = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            else:
                continue
            for candidate in candidates:
                while candidate and candidate not in modules:
                    candidate = candidate.rpartition(".")[0]
                if candidate and candidate != name:
                    targets.add(candidate)
        graph[name] = targets
    return graph


def _layer(module: str) -> str:
    package = module.split(".")[:3]  # app.ui.screenshots is no screen
    if package == ["app", "ui", "widgets"]:
        return "widgets"
    if package == ["app", "ui", "screens"]:
        return "screens"
    return "composer" if module in COMPOSERS else "plumbing"


def _screen(module: str) -> str:
    """The screen a module belongs to: app.ui.screens.doctor.memory -> doctor."""
    return module.removeprefix("app.ui.screens.").partition(".")[0]


GRAPH = _ui_imports()


def test_the_graph_sees_the_layers() -> None:
    assert {_layer(module) for module in GRAPH} == {"widgets", "screens", "composer", "plumbing"}
    assert "app.ui.screens.doctor.memory" in GRAPH["app.ui.screens.doctor.wizard"]


def test_app_ui_has_no_import_circle() -> None:
    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), list(GRAPH[start])
        while todo:
            module = todo.pop()
            if module == goal:
                return True
            if module not in seen:
                seen.add(module)
                todo.extend(GRAPH[module])
        return False

    circles = sorted(m for m in GRAPH if reaches(m, m))
    assert circles == []


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_each_module_imports_only_what_its_layer_may(module: str) -> None:
    allowed = {
        "widgets": {"widgets"},
        "plumbing": {"plumbing", "widgets"},
        "screens": {"plumbing", "widgets", "screens"},
        "composer": {"plumbing", "widgets", "screens", "composer"},
    }[_layer(module)]
    wrong = sorted(target for target in GRAPH[module] if _layer(target) not in allowed)
    if _layer(module) == "screens":  # a screen never reaches into another screen
        wrong += sorted(
            target
            for target in GRAPH[module]
            if _layer(target) == "screens"
            and target != "app.ui.screens"
            and _screen(target) != _screen(module)
        )
    assert wrong == []
