"""tracker_service re-implements what it verifies; it never imports the node or the app."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "tracker_service"
FORBIDDEN = ("core", "app")


def _imported_roots(path: Path) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_tracker_service_imports_neither_core_nor_app() -> None:
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 10
    offenders = {
        str(path.relative_to(PACKAGE)): sorted(_imported_roots(path) & set(FORBIDDEN))
        for path in files
        if _imported_roots(path) & set(FORBIDDEN)
    }
    assert offenders == {}
