"""Pack a Windows bundle into ``MeshNet-<version>-setup.exe`` with NSIS, on Linux or Windows.

``makensis`` (Debian's ``nsis``, or NSIS 3 on Windows) compiles
``installers/windows/meshnet.nsi`` around the PyInstaller folder. Before
packing, the bundle's imports are checked (installers/windows_dll_check.py):
a DLL that neither the bundle nor every Windows has fails the build here,
not on a user's PC.

Signing, honestly: no Authenticode certificate exists in this project. Given
one (``MESHNET_SIGN_PKCS12`` = a .pfx file, ``MESHNET_SIGN_PASSWORD`` its
password), the installer is signed with ``osslsigncode`` and timestamped;
without one the build says the installer is unsigned, and prints its SHA-256
for the download page either way.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from installers.layout import app_version, icons_source
from installers.windows_dll_check import find_objdump, missing_dlls, report

log = logging.getLogger(__name__)

NSI = Path(__file__).resolve().parent / "windows" / "meshnet.nsi"
SIGN_PKCS12_ENV = "MESHNET_SIGN_PKCS12"
SIGN_PASSWORD_ENV = "MESHNET_SIGN_PASSWORD"
TIMESTAMP_URL = "http://timestamp.digicert.com"


class WindowsPackageError(RuntimeError):
    """The setup.exe could not be built; the message says what to do."""


def setup_name(version: str | None = None) -> str:
    return f"MeshNet-{version or app_version()}-setup.exe"


def makensis_argv(
    bundle: Path,
    out_file: Path,
    *,
    version: str,
    icon: Path,
    compressor: str = "lzma",
    makensis: str = "makensis",
) -> list[str]:
    return [
        makensis,
        "-V2",
        "-WX",  # a warning is an error: the script stays clean
        f"-DVERSION={version}",
        f"-DSOURCE_DIR={bundle.resolve()}",
        f"-DOUT_FILE={out_file.resolve()}",
        f"-DICON_FILE={icon.resolve()}",
        f"-DCOMPRESSOR={compressor}",
        str(NSI),
    ]


def check_bundle_dlls(bundle: Path) -> None:
    if not any((bundle / name).is_file() for name in ("meshnet-app.exe", "meshnet-node.exe")):
        raise WindowsPackageError(f"{bundle} holds no meshnet-app.exe: build the bundle first")
    objdump = find_objdump()
    if objdump is None:
        raise WindowsPackageError("objdump is needed to check the bundle's DLLs (binutils)")
    missing = missing_dlls(bundle, objdump=objdump)
    if missing:
        raise WindowsPackageError(report(missing))


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def sign_argv(setup: Path, signed: Path, pkcs12: str, password: str) -> list[str]:
    return [
        "osslsigncode", "sign", "-pkcs12", pkcs12, "-pass", password,
        "-n", "MeshNet", "-i", "https://github.com/meshnet", "-h", "sha256",
        "-t", TIMESTAMP_URL, "-in", str(setup), "-out", str(signed),
    ]  # fmt: skip


def sign(setup: Path, environ: Mapping[str, str] | None = None) -> bool:
    """Sign in place when a certificate is given; False (said aloud) when there is none."""
    env = os.environ if environ is None else environ
    pkcs12 = env.get(SIGN_PKCS12_ENV)
    if not pkcs12:
        print(f"installer: UNSIGNED ({SIGN_PKCS12_ENV} not set); SmartScreen will warn users")
        return False
    if shutil.which("osslsigncode") is None:
        raise WindowsPackageError("a certificate was given but osslsigncode is not installed")
    signed = setup.with_suffix(".signed.exe")
    subprocess.run(sign_argv(setup, signed, pkcs12, env.get(SIGN_PASSWORD_ENV, "")), check=True)
    os.replace(signed, setup)
    print(f"installer: signed with {pkcs12}")
    return True


def build_setup(
    bundle: Path,
    dist: Path,
    *,
    compressor: str = "lzma",
    check_dlls: bool = True,
    version: str | None = None,
) -> Path:
    """``dist/MeshNet-<version>-setup.exe`` from ``bundle`` (checked, packed, maybe signed)."""
    makensis = shutil.which("makensis")
    if makensis is None:
        raise WindowsPackageError("makensis not found: install NSIS (Debian: apt-get install nsis)")
    if check_dlls:
        check_bundle_dlls(bundle)
    version = version or app_version()
    dist.mkdir(parents=True, exist_ok=True)
    setup = dist / setup_name(version)
    argv = makensis_argv(
        bundle,
        setup,
        version=version,
        icon=icons_source() / "app.ico",
        compressor=compressor,
        makensis=makensis,
    )
    subprocess.run(argv, check=True)
    sign(setup)
    print(f"installer: {setup} sha256 {sha256(setup)}")
    return setup
