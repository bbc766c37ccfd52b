"""Fail a Windows bundle whose programs import a DLL that a user's PC may not have.

Wine ships its own builds of many DLLs a real Windows lacks (the Visual C++
runtime among them), and PyInstaller under Wine leaves out what it takes for
an OS DLL ("Excluding Wine built-in DLL"): torch's ``c10.dll`` then imports
``MSVCP140.dll``, absent from the bundle, and ``meshnet-node.exe`` fails on a
PC without the Visual C++ redistributable while every test under Wine passes.
So the check is static: each ``.exe``, ``.dll`` and ``.pyd`` in the bundle has
its import table read with ``objdump -p`` (binutils reads PE files on Linux),
and each imported DLL must be in the bundle or on :data:`SYSTEM_DLLS`, the
DLLs every supported Windows (10 1903 and later, 11, 64-bit) has in System32.
API sets (``api-ms-win-*``, ``ext-ms-*``) are resolved by the loader itself.

A DLL anywhere in the bundle counts as present: PyInstaller's bootloader and
torch add their folders to the DLL search path. Delay-loaded DLLs are not read
(objdump lists only the import table): they load on first use, and a missing
one fails then, not at start.

    python -m installers.windows_dll_check dist/meshnet
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

PE_SUFFIXES = (".exe", ".dll", ".pyd")
API_SET_PREFIXES = ("api-ms-win-", "ext-ms-")

# In System32 on every 64-bit Windows 10 (1903+) and 11, Home editions included.
# Not here on purpose: the Visual C++ runtime (vcruntime140*.dll, msvcp140*.dll,
# concrt140.dll, vcomp140.dll), which the bundle must carry, and vendor drivers
# (nvcuda.dll, nvml.dll), which a program must load at run time, not import.
SYSTEM_DLLS = frozenset(
    name.lower()
    for name in """
    advapi32.dll authz.dll bcrypt.dll bcryptprimitives.dll cabinet.dll cfgmgr32.dll
    combase.dll comctl32.dll comdlg32.dll crypt32.dll cryptbase.dll cryptnet.dll cryptsp.dll
    d2d1.dll d3d9.dll d3d11.dll d3d12.dll d3dcompiler_47.dll dbghelp.dll dcomp.dll
    dnsapi.dll dwmapi.dll dwrite.dll dxgi.dll dxva2.dll evr.dll gdi32.dll gdiplus.dll
    glu32.dll hid.dll icu.dll icuin.dll icuuc.dll imagehlp.dll imm32.dll iphlpapi.dll
    kernel32.dll kernelbase.dll mf.dll mfplat.dll mfreadwrite.dll mpr.dll msimg32.dll msvcrt.dll
    mswsock.dll ncrypt.dll netapi32.dll normaliz.dll ntdll.dll ole32.dll oleacc.dll
    oleaut32.dll opengl32.dll pdh.dll powrprof.dll propsys.dll psapi.dll rpcrt4.dll
    secur32.dll setupapi.dll shcore.dll shell32.dll shlwapi.dll sspicli.dll
    ucrtbase.dll urlmon.dll user32.dll userenv.dll usp10.dll uxtheme.dll version.dll
    winhttp.dll wininet.dll winmm.dll winspool.drv wintrust.dll wldap32.dll ws2_32.dll
    uiautomationcore.dll wtsapi32.dll
    """.split()  # noqa: SIM905 - a paragraph of names reads better than a list
)

Run = Callable[[list[str]], str]


@dataclass(frozen=True)
class MissingDll:
    importer: Path  # relative to the bundle
    dll: str


def run_objdump(argv: list[str]) -> str:
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout


def parse_imports(objdump_output: str) -> list[str]:
    """The DLL names of an ``objdump -p`` listing's import table, in order."""
    names = []
    for line in objdump_output.splitlines():
        label, sep, value = line.strip().partition("DLL Name:")
        if sep and not label and value.strip():
            names.append(value.strip())
    return names


def imported_dlls(path: Path, run: Run = run_objdump, objdump: str = "objdump") -> list[str]:
    return parse_imports(run([objdump, "-p", str(path)]))


def is_system(dll: str, extra: Iterable[str] = ()) -> bool:
    name = dll.lower()
    return (
        name in SYSTEM_DLLS
        or name.startswith(API_SET_PREFIXES)
        or name in {e.lower() for e in extra}
    )


def pe_files(bundle: Path) -> list[Path]:
    return sorted(p for p in bundle.rglob("*") if p.is_file() and p.suffix.lower() in PE_SUFFIXES)


def missing_dlls(
    bundle: Path,
    *,
    run: Run = run_objdump,
    objdump: str = "objdump",
    allow: Iterable[str] = (),
) -> list[MissingDll]:
    """Each (file, DLL) whose DLL is neither in the bundle nor every Windows has."""
    files = pe_files(bundle)
    present = {p.name.lower() for p in files}
    allowed = list(allow)
    missing = []
    for path in files:
        for dll in imported_dlls(path, run, objdump):
            if dll.lower() not in present and not is_system(dll, allowed):
                missing.append(MissingDll(path.relative_to(bundle), dll))
    return missing


def find_objdump() -> str | None:
    return shutil.which("x86_64-w64-mingw32-objdump") or shutil.which("objdump")


def report(missing: list[MissingDll]) -> str:
    by_dll: dict[str, list[str]] = {}
    for item in missing:
        by_dll.setdefault(item.dll, []).append(str(item.importer))
    lines = [
        f"{dll}: imported by {', '.join(sorted(users)[:3])}"
        + (f" and {len(users) - 3} more" if len(users) > 3 else "")
        for dll, users in sorted(by_dll.items(), key=lambda kv: kv[0].lower())
    ]
    return (
        "the bundle imports DLLs that it does not carry and a Windows PC may not have:\n  "
        + "\n  ".join(lines)
        + "\nAdd them to the bundle (the Visual C++ runtime comes from the msvc-runtime "
        "wheel), or, for a DLL every Windows has, to SYSTEM_DLLS in this file."
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundle", type=Path, help="the PyInstaller folder, e.g. dist/meshnet")
    parser.add_argument("--allow", action="append", default=[], help="a DLL to accept too")
    args = parser.parse_args(argv)
    objdump = find_objdump()
    if objdump is None:
        print("windows_dll_check: objdump not found (apt-get install binutils)", file=sys.stderr)
        return 2
    if not args.bundle.is_dir():
        print(f"windows_dll_check: {args.bundle} is not a folder", file=sys.stderr)
        return 2
    if not pe_files(args.bundle):
        print(f"windows_dll_check: {args.bundle} holds no .exe, .dll or .pyd", file=sys.stderr)
        return 2
    missing = missing_dlls(args.bundle, objdump=objdump, allow=args.allow)
    if missing:
        print(f"windows_dll_check: {report(missing)}", file=sys.stderr)
        return 1
    print(f"windows_dll_check: {len(pe_files(args.bundle))} programs and libraries, no DLL missing")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
