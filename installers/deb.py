"""Build the Linux ``.deb`` from a PyInstaller bundle folder with ``dpkg-deb``.

Layout (Debian's conventions for a self-contained app):

- ``/opt/meshnet/``: the bundle, untouched (``meshnet-app``, ``meshnet-node``,
  ``_internal/``); the app finds its node beside itself.
- ``/usr/bin/meshnet-app`` and ``/usr/bin/meshnet-node``: links into it, so a
  terminal finds both (the bootloader resolves the link to its real folder).
- ``/usr/share/applications/meshnet.desktop``: the menu entry.
- ``/usr/share/applications/meshnet-join.desktop``: the hidden ``meshnet://`` handler.
- ``/usr/share/icons/hicolor/<N>x<N>/apps/meshnet.png`` and ``scalable/…svg``.

No maintainer scripts: the icon cache and the desktop database are refreshed by
the dpkg triggers of ``gtk-update-icon-cache`` and ``desktop-file-utils`` (whose
``update-desktop-database`` writes ``/usr/share/applications/mimeinfo.cache``:
that is where ``xdg-mime query default x-scheme-handler/meshnet`` finds
``meshnet-join.desktop`` for every user who has not chosen another handler; a
postinst running ``xdg-mime default`` as root would set root's choice only), and
start-at-login is the user's choice in the app's settings (a per-user XDG
autostart entry), never something the package installs. User data lives in the
user's home and is never touched by ``dpkg -r`` or ``--purge``.
"""

from __future__ import annotations

import logging
import os
import platform
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from installers.layout import (
    APP_EXECUTABLE,
    BUNDLE_FOLDER,
    NODE_EXECUTABLE,
    PNG_SIZES,
    app_version,
    icon_png,
    icons_source,
)

log = logging.getLogger(__name__)

PACKAGE = "meshnet"
INSTALL_ROOT = f"/opt/{BUNDLE_FOLDER}"
ICON_THEME_NAME = "meshnet"  # Icon= in the .desktop entry
HERE = Path(__file__).resolve().parent
DESKTOP_TEMPLATE = HERE / "linux" / "meshnet.desktop"
# The meshnet:// handler: a hidden entry (NoDisplay) whose Exec passes the link to
# `meshnet-app --join`; desktop-file-utils' trigger registers its MimeType.
JOIN_DESKTOP_TEMPLATE = HERE / "linux" / "meshnet-join.desktop"
COPYRIGHT = HERE / "linux" / "copyright"
# What the bundle takes from the system (``ldd`` over every library in it):
# PyInstaller leaves the GL/EGL dispatch and the X connection to the OS, and Qt
# needs them to open any window; the Wayland client libraries only matter in a
# Wayland session (Qt falls back to X through XWayland). The xcb helpers,
# xkbcommon, fontconfig and D-Bus are bundled.
DEPENDS = ("libgl1", "libegl1", "libxcb1")
# desktop-file-utils: its trigger registers the meshnet:// handler (see above); every
# desktop has it, a minimal system installing with apt gets it too.
RECOMMENDS = ("libwayland-client0", "libwayland-cursor0", "libwayland-egl1", "desktop-file-utils")


class DebBuildError(RuntimeError):
    """The package could not be built; the message names the missing piece."""


@dataclass(frozen=True)
class DebInfo:
    version: str
    architecture: str
    installed_size_kib: int
    libc_version: str


def debian_architecture() -> str:
    if shutil.which("dpkg"):
        out = subprocess.run(
            ["dpkg", "--print-architecture"], capture_output=True, text=True, check=True
        )
        return out.stdout.strip()
    return {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())


def libc_version() -> str:
    """The build machine's glibc: the bundle's Python needs at least this one."""
    name, version = platform.libc_ver()
    return version if name == "glibc" and version else "2.31"


def folder_size_kib(folder: Path) -> int:
    total = 0
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            total += path.stat().st_size
    return (total + 1023) // 1024


def control_text(info: DebInfo) -> str:
    lines = [
        f"Package: {PACKAGE}",
        f"Version: {info.version}",
        f"Architecture: {info.architecture}",
        "Maintainer: MeshNet developers <dev@meshnet.invalid>",
        f"Installed-Size: {info.installed_size_kib}",
        f"Depends: libc6 (>= {info.libc_version}), {', '.join(DEPENDS)}",
        f"Recommends: {', '.join(RECOMMENDS)}",
        "Section: net",
        "Priority: optional",
        "Description: pool gaming PCs into one network that serves language models",
        " MeshNet's tray app lends this computer's GPU (or CPU) to the MeshNet",
        " network: a doctor proves what it can serve, Contribute turns it on, and",
        " pause rules step aside while you play. Python, Qt, PyTorch and the",
        " default model are bundled under /opt/meshnet.",
    ]
    return "\n".join(lines) + "\n"


def stage(bundle: Path, root: Path) -> DebInfo:
    """Lay out the package tree under ``root`` (emptied first); returns its control data."""
    for name in (APP_EXECUTABLE, NODE_EXECUTABLE):
        if not (bundle / name).is_file():
            raise DebBuildError(f"{bundle / name} is missing: build the bundle first")
    if root.exists():
        shutil.rmtree(root)
    opt = root / INSTALL_ROOT.lstrip("/")
    shutil.copytree(bundle, opt, symlinks=True)
    bin_dir = root / "usr" / "bin"
    bin_dir.mkdir(parents=True)
    for name in (APP_EXECUTABLE, NODE_EXECUTABLE):
        (bin_dir / name).symlink_to(f"{INSTALL_ROOT}/{name}")
    share = root / "usr" / "share"
    (share / "applications").mkdir(parents=True)
    shutil.copy2(DESKTOP_TEMPLATE, share / "applications" / "meshnet.desktop")
    shutil.copy2(JOIN_DESKTOP_TEMPLATE, share / "applications" / JOIN_DESKTOP_TEMPLATE.name)
    hicolor = share / "icons" / "hicolor"
    for size in PNG_SIZES:
        folder = hicolor / f"{size}x{size}" / "apps"
        folder.mkdir(parents=True)
        shutil.copy2(icon_png(size), folder / f"{ICON_THEME_NAME}.png")
    scalable = hicolor / "scalable" / "apps"
    scalable.mkdir(parents=True)
    shutil.copy2(icons_source() / "app.svg", scalable / f"{ICON_THEME_NAME}.svg")
    doc = share / "doc" / PACKAGE
    doc.mkdir(parents=True)
    shutil.copy2(COPYRIGHT, doc / "copyright")
    _normalise_modes(root)
    info = DebInfo(
        version=app_version(),
        architecture=debian_architecture(),
        installed_size_kib=folder_size_kib(root),
        libc_version=libc_version(),
    )
    control = root / "DEBIAN"
    control.mkdir()
    (control / "control").write_text(control_text(info), encoding="utf-8")
    return info


def _normalise_modes(root: Path) -> None:
    """0755 folders and executables, 0644 everything else (dpkg keeps the modes)."""
    for dirpath, _dirnames, filenames in os.walk(root):
        os.chmod(dirpath, 0o755)
        for name in filenames:
            path = Path(dirpath) / name
            if path.is_symlink():
                continue
            executable = path.stat().st_mode & 0o111
            path.chmod(0o755 if executable else 0o644)


def deb_name(info: DebInfo) -> str:
    return f"{PACKAGE}_{info.version}_{info.architecture}.deb"


def build_deb(
    bundle: Path, out_dir: Path, *, work_dir: Path | None = None, compression: str = "xz"
) -> Path:
    """Stage ``bundle`` and run ``dpkg-deb --build``; returns the .deb's path.

    ``compression`` is dpkg-deb's ``-Z``: ``xz`` for what users download (about a
    third of gzip's size for torch's libraries), ``gzip`` or ``none`` where only
    the build's speed matters (the install test).
    """
    if shutil.which("dpkg-deb") is None:
        raise DebBuildError("dpkg-deb not found: build the .deb on Debian or Ubuntu")
    root = (work_dir or out_dir / "deb-root") / PACKAGE
    info = stage(bundle, root)
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / deb_name(info)
    command = ["dpkg-deb", "--root-owner-group", f"-Z{compression}"]
    if compression == "xz":
        command.append(f"--threads-max={os.cpu_count() or 1}")
    subprocess.run([*command, "--build", str(root), str(target)], check=True)
    shutil.rmtree(root)
    log.info("wrote %s", target)
    return target
