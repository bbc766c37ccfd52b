"""MeshNet node core. Imports no Qt and no web framework; the GUI and the CLIs in
``app`` compose it. Top floor first (docs/architecture.md, "The node"):

    node/         the lifecycle of a serving node and the parts it builds
    jobs/         the batch-job executor (beside node/, never under it)
    doctor/       proving a computer: hardware, the doctor's run, the admission gate
    dataplane/    the shard server route clients reach: tickets, receipts, frames, relay
    runtime/      the model code (families, layers, quantisation, sessions): stands alone
    models/       model files: the default model, GGUF import, the hub
    network/      joining a network and talking to its tracker
    recipes/      the recipe identity block and the shipped catalogue
    identity/     the key pair, the keystore, signing, owner-only secret files
    events.py     what the lifecycle publishes      progress.py  long steps, cancelling
    paths.py      where the node keeps its files    one_process_generate.py  `meshnet generate`
    errors.py     the one exception tree
"""

from __future__ import annotations

__version__ = "0.1.0"
