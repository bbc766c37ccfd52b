"""Write the Windows ``.ico`` and macOS ``.icns`` app icons from the committed PNGs.

Build-time only (Pillow is in the ``installer`` extra, not a runtime
dependency). Each size is taken from its own hand-rendered PNG rather than
downscaled from the largest, so 16 px stays as sharp as
``assets/icons/render.py`` drew it. ``python installers/make_icons.py``
rewrites ``assets/icons/app.ico`` and ``app.icns``; ``build.py`` runs it first.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from installers.layout import PNG_SIZES, icon_png, icons_source

log = logging.getLogger("make-icons")

# Windows shows 16-48 in Explorer and the taskbar, 256 in large views.
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
# The icns types Pillow writes from the sizes it is given (16-1024, some @2x).
ICNS_SIZES = (16, 32, 64, 128, 256)


def _open(size: int, root: Path | None) -> object:
    from PIL import Image

    image = Image.open(icon_png(size, root)).convert("RGBA")
    if image.size != (size, size):
        raise SystemExit(f"{icon_png(size, root)} is {image.size}, expected {size}x{size}")
    return image


def write_ico(target: Path, root: Path | None = None) -> Path:
    images = [_open(size, root) for size in ICO_SIZES if size in PNG_SIZES]
    largest = images[-1]
    largest.save(  # type: ignore[attr-defined]
        target,
        format="ICO",
        sizes=[im.size for im in images],  # type: ignore[attr-defined]
        append_images=images[:-1],
    )
    return target


def write_icns(target: Path, root: Path | None = None) -> Path:
    images = [_open(size, root) for size in ICNS_SIZES]
    images[-1].save(  # type: ignore[attr-defined]
        target, format="ICNS", append_images=images[:-1]
    )
    return target


def write_all(root: Path | None = None) -> list[Path]:
    folder = icons_source(root)
    return [write_ico(folder / "app.ico", root), write_icns(folder / "app.icns", root)]


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    for path in write_all():
        log.info("wrote %s (%d bytes)", path, path.stat().st_size)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
