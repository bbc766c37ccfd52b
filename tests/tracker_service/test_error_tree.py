"""Every exception tracker_service defines hangs from TrackerError, with a reason code,
is defined in tracker_service/errors.py, and the tree drawn there names it."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import tracker_service
from tests.support.error_names import shared_with_other_sides, twice_defined
from tracker_service import errors
from tracker_service.errors import TrackerError


def _modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(tracker_service.__path__, "tracker_service."):
        # Alembic's env and revisions run only under Alembic; __main__ runs the CLI.
        if ".migrations" in info.name or info.name.endswith("__main__"):
            continue
        names.append(info.name)
    return names


def _exception_classes() -> list[type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for name in _modules():
        module = importlib.import_module(name)
        for _, value in inspect.getmembers(module, inspect.isclass):
            if issubclass(value, BaseException) and value.__module__ == name:
                found[f"{name}.{value.__qualname__}"] = value
    return [found[key] for key in sorted(found)]


EXCEPTIONS = _exception_classes()


def test_the_tracker_defines_exceptions() -> None:
    # Guards the walk itself: an empty list would pass every case below.
    assert len(EXCEPTIONS) >= 30, [c.__name__ for c in EXCEPTIONS]


@pytest.mark.parametrize("cls", EXCEPTIONS, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_derives_from_tracker_error_with_a_reason(cls: type[BaseException]) -> None:
    assert issubclass(cls, TrackerError), f"{cls.__qualname__} does not derive from TrackerError"
    reason = getattr(cls, "reason", None)
    assert isinstance(reason, str) and reason, f"{cls.__qualname__} has no reason code"
    assert reason == reason.strip() and " " not in reason, reason


@pytest.mark.parametrize("cls", EXCEPTIONS, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_it_is_defined_in_errors_py(cls: type[BaseException]) -> None:
    # One home: a newcomer finds every exception the tracker raises in one file.
    assert cls.__module__ == errors.__name__, (
        f"move {cls.__qualname__} from {cls.__module__} to tracker_service/errors.py"
    )


@pytest.mark.parametrize("cls", EXCEPTIONS, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_the_tree_in_errors_py_names_it(cls: type[BaseException]) -> None:
    assert cls.__name__ in (errors.__doc__ or ""), (
        f"draw {cls.__name__} in tracker_service/errors.py's tree"
    )


def test_instances_carry_their_own_reason() -> None:
    # Classes that cover several refusals take the code per instance.
    refusal = errors.TrackerRefusal("re-register", "already registered")
    assert refusal.reason == "re-register" and isinstance(refusal, TrackerError)
    from tracker_service.errors import RateLimited

    limited = RateLimited("slow down", retry_after_s=3)
    assert limited.reason == "rate_limit_exceeded" and isinstance(limited, TrackerError)


def test_no_exception_name_is_defined_twice_in_the_tracker() -> None:
    assert twice_defined(EXCEPTIONS) == []


def test_a_name_shared_with_core_or_app_means_the_same_there() -> None:
    # Only SAME_MEANING names may recur across sides; rename any other collision.
    assert shared_with_other_sides("tracker_service", EXCEPTIONS) == []
