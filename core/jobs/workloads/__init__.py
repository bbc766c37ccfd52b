"""Workloads an executor may run (the runner's allowlist names these modules)."""
