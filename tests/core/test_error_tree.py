"""Every exception class in core/ is a MeshnetError with a stable reason, defined in
core/errors.py and drawn in its tree."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path

import core
import core.errors
from core.errors import MeshnetError
from tests.support.error_names import shared_with_other_sides, twice_defined

CORE = Path(core.__file__).resolve().parent
REASON = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(CORE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _exception_classes() -> list[type[BaseException]]:
    """Each class defined in a core module that is an exception (found in the source,
    judged on the imported class, so a base named through an alias still counts)."""
    found: list[type[BaseException]] = []
    for path in sorted(CORE.rglob("*.py")):
        names = [
            n.name for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.ClassDef)
        ]
        if not names:
            continue
        module = importlib.import_module(_module_name(path))
        for name in names:
            cls = getattr(module, name, None)
            if inspect.isclass(cls) and issubclass(cls, BaseException):
                found.append(cls)
    return found


def test_the_walk_finds_the_known_errors() -> None:
    names = {cls.__name__ for cls in _exception_classes()}
    # Roots and leaves of the tree, the jobs' included: the walk reaches them all.
    assert {"ConfigError", "ArchiveError", "LeaseLost", "Cancelled"} <= names


def test_every_core_exception_is_defined_in_core_errors() -> None:
    """One home for the tree: a class defined in any other module of core/ is a stray."""
    elsewhere = sorted(
        f"{cls.__module__}.{cls.__qualname__}"
        for cls in _exception_classes()
        if cls.__module__ != "core.errors"
    )
    assert elsewhere == []


def test_every_core_exception_derives_from_meshnet_error() -> None:
    strays = [
        f"{cls.__module__}.{cls.__qualname__}"
        for cls in _exception_classes()
        if not issubclass(cls, MeshnetError)
    ]
    assert strays == []


def test_every_core_exception_has_a_stable_reason_code() -> None:
    bad = {
        f"{cls.__module__}.{cls.__qualname__}": getattr(cls, "reason", None)
        for cls in _exception_classes()
        if not (isinstance(getattr(cls, "reason", None), str) and REASON.match(cls.reason))  # type: ignore[attr-defined]
    }
    assert bad == {}


def test_the_tree_in_the_errors_docstring_names_every_class() -> None:
    drawn = set(
        re.findall(r"^ {4}(?:[│ ]   )*(?:[├└]── )?([A-Z]\w+)", core.errors.__doc__ or "", re.M)
    )
    missing = sorted(cls.__name__ for cls in _exception_classes() if cls.__name__ not in drawn)
    assert missing == []


def test_one_cancelled() -> None:
    cancelled = [cls for cls in _exception_classes() if "Cancel" in cls.__name__]
    assert [f"{cls.__module__}.{cls.__name__}" for cls in cancelled] == ["core.errors.Cancelled"]


def test_no_exception_name_is_defined_twice_in_core() -> None:
    assert twice_defined(_exception_classes()) == []


def test_a_name_shared_with_app_or_tracker_means_the_same_there() -> None:
    # Only SAME_MEANING names may recur across sides; rename any other collision.
    assert shared_with_other_sides("core", _exception_classes()) == []
