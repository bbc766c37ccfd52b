"""Tests of tracker_service.store."""
