"""Tests of tracker_service.relay."""
