"""Tests of tracker_service.api."""
