"""PyInstaller entry point of the bundled ``meshnet-app`` (the tray app)."""

from __future__ import annotations

from app.ui.main import main

if __name__ == "__main__":
    raise SystemExit(main())
