"""Tests of tracker_service.cli."""
