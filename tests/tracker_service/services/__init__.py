"""Tests of tracker_service.services."""
