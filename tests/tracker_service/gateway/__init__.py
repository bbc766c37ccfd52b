"""Tests of tracker_service.gateway."""
