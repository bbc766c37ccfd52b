"""PyInstaller entry point of the bundled ``meshnet-node`` (the app's node child).

``freeze_support`` makes a frozen child that some library starts through
``multiprocessing`` run its task instead of a second node. A GPU runtime the
wizard downloaded (the CUDA build of torch, app/gpu_runtime.py) goes first on
``sys.path`` before anything imports torch: PyInstaller's finder serves the
bundle's own folder only where that folder comes up on the path, so the runtime's
``torch`` wins over the bundled CPU one.
"""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from app.gpu_runtime import prepend_to_path
from core.paths import platform_data_home

prepend_to_path(Path(platform_data_home()))

from app.cli.node import main  # noqa: E402 (torch may come from the runtime above)

if __name__ == "__main__":
    multiprocessing.freeze_support()
    raise SystemExit(main())
