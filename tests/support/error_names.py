"""Exception names across the three sides (core/, app/, tracker_service/).

Each side draws its own exception tree; a name may appear on two sides only when
it means the same thing there (the same concept, checked independently because
the tracker never imports core). Those names are listed here, on purpose; any
other class name one side's exceptions share with another side is a collision.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SIDES = ("core", "app", "tracker_service")

# Same concept on both sides, checked independently (see both errors.py docstrings).
SAME_MEANING = frozenset({"PinMismatch", "RecipeIdentityError", "FingerprintMismatch"})


def class_names(side: str) -> set[str]:
    """Every class name defined anywhere in a side's source (read, not imported)."""
    names: set[str] = set()
    for path in (ROOT / side).rglob("*.py"):
        if "migrations" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names.update(n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef))
    return names


def twice_defined(classes: list[type[BaseException]]) -> list[str]:
    """Exception names defined by more than one class of the list."""
    counts = Counter(cls.__name__ for cls in set(classes))
    return sorted(name for name, n in counts.items() if n > 1)


def shared_with_other_sides(side: str, classes: list[type[BaseException]]) -> list[str]:
    """This side's exception names that another side also defines, beyond SAME_MEANING."""
    others = set().union(*(class_names(s) for s in SIDES if s != side))
    return sorted({cls.__name__ for cls in classes} & others - SAME_MEANING)
