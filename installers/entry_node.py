"""PyInstaller entry point of the bundled ``meshnet-node`` (the app's node child).

``freeze_support`` makes a frozen child that some library starts through
``multiprocessing`` run its task instead of a second node.
"""

from __future__ import annotations

import multiprocessing

from app.cli.node import main

if __name__ == "__main__":
    multiprocessing.freeze_support()
    raise SystemExit(main())
