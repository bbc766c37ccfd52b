"""Fixtures of the executor tests."""

from tests.core.jobs.tracker_fixture import live_tracker

__all__ = ["live_tracker"]
