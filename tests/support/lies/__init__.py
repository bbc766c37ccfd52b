"""Test-side liars: each module here turns an honest node process into one kind of liar.

A module has ``install() -> None``, which patches the node's code in *this* process
only (never the product's files). ``tests.tracker_service.node_process`` calls it
before the node starts when ``MESHNET_TEST_LIE_MODULE`` names the module, so an
attack test starts a real node process that lies in exactly one way::

    start_node_process(model, 0, 30, 1, MESHNET_TEST_LIE_MODULE="top_ids")

One lie per module, named after what it does; several modules, comma-separated, combine
(``"every_step,deep_session"``).
"""

from __future__ import annotations

import importlib
import os

LIE_MODULE_ENV = "MESHNET_TEST_LIE_MODULE"


def install_from_env() -> str | None:
    """Install the liars named in the environment, if any; return their names."""
    name = os.environ.get(LIE_MODULE_ENV, "").strip()
    if os.environ.get("MESHNET_TEST_LIE_RATE"):  # the plain liar (rate.py) by itself
        name = ",".join(n for n in ("rate", name) if n)
    if not name:
        return None
    for part in name.split(","):
        importlib.import_module(f"{__name__}.{part.strip()}").install()
    return name
