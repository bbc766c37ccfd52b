"""Tests of tracker_service.domain."""
