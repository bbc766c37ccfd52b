"""Batch jobs on contributor machines: the pull-based executor and its parts.

client.py       the tracker's job API (claim, lease heartbeats, artifacts, checkpoints)
credentials.py  the executor's session credential per tracker (keyring or 0600 file)
archives.py     safe unpacking of submitter archives
runner.py       allowlisted workloads in a fresh, env-scrubbed subprocess
loop.py         claim → inputs → run (heartbeating, checkpoint relay) → upload → commit
workloads/      what a task can run: selftest, perplexity, batch_generate
"""
