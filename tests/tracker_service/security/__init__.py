"""Tests of tracker_service.security."""
