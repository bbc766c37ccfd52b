"""The Windows installer's pieces that run on Linux: the DLL check on real PE files
built with mingw, the NSIS script compiled by makensis around a stand-in bundle, and
the script's agreement with the app (autostart value, link handler, data kept)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from app.autostart import APP_NAME, RUN_KEY
from installers import windows_dll_check as check
from installers.layout import URL_SCHEME
from installers.windows_package import NSI, makensis_argv, sign, sign_argv

MINGW = "x86_64-w64-mingw32-gcc"
needs_mingw = pytest.mark.skipif(
    shutil.which(MINGW) is None or shutil.which("x86_64-w64-mingw32-dlltool") is None,
    reason="mingw-w64 not installed (apt-get install gcc-mingw-w64-x86-64-win32)",
)
needs_makensis = pytest.mark.skipif(
    shutil.which("makensis") is None, reason="NSIS not installed (apt-get install nsis)"
)

# `objdump -p` of a PyInstaller-frozen torch DLL, cut to its import table.
C10_IMPORTS = """
The Import Tables (interpreted .rdata section contents)
 vma:            Hint    Time      Forward  DLL       First
                 Table   Stamp     Chain    Name      Thunk
 000a1234	000a1300 00000000 00000000 000a2000 000a3000

	DLL Name: MSVCP140.dll
	vma:     Hint/Ord Member-Name Bound-To
	a4000	  123  ?_Xlength_error@std@@YAXPEBD@Z

	DLL Name: VCRUNTIME140.dll
	DLL Name: VCRUNTIME140_1.dll
	DLL Name: api-ms-win-crt-runtime-l1-1-0.dll
	DLL Name: KERNEL32.dll
	DLL Name: MSVCP140_ATOMIC_WAIT.dll
"""


def test_the_import_table_is_read_from_objdumps_listing() -> None:
    assert check.parse_imports(C10_IMPORTS) == [
        "MSVCP140.dll",
        "VCRUNTIME140.dll",
        "VCRUNTIME140_1.dll",
        "api-ms-win-crt-runtime-l1-1-0.dll",
        "KERNEL32.dll",
        "MSVCP140_ATOMIC_WAIT.dll",
    ]


def test_the_visual_cpp_runtime_is_never_taken_for_part_of_windows() -> None:
    for runtime in ("MSVCP140.dll", "MSVCP140_ATOMIC_WAIT.dll", "VCRUNTIME140.dll", "vcomp140.dll"):
        assert not check.is_system(runtime)
    assert check.is_system("KERNEL32.dll") and check.is_system("api-ms-win-crt-math-l1-1-0.dll")
    assert check.is_system("nvcuda.dll", extra=["NVCUDA.dll"])


def test_a_bundle_without_the_runtime_torch_imports_fails_naming_the_dlls(tmp_path: Path) -> None:
    (tmp_path / "_internal" / "torch" / "lib").mkdir(parents=True)
    (tmp_path / "_internal" / "torch" / "lib" / "c10.dll").write_bytes(b"MZ")
    (tmp_path / "_internal" / "VCRUNTIME140.dll").write_bytes(b"MZ")
    (tmp_path / "_internal" / "vcruntime140_1.dll").write_bytes(b"MZ")  # case does not matter
    (tmp_path / "readme.txt").write_text("not a PE file")

    def objdump(argv: list[str]) -> str:
        return C10_IMPORTS if argv[-1].endswith("c10.dll") else ""

    missing = check.missing_dlls(tmp_path, run=objdump)
    assert {m.dll for m in missing} == {"MSVCP140.dll", "MSVCP140_ATOMIC_WAIT.dll"}
    assert all(m.importer == Path("_internal/torch/lib/c10.dll") for m in missing)
    sentence = check.report(missing)
    assert "MSVCP140.dll: imported by _internal/torch/lib/c10.dll" in sentence
    assert "msvc-runtime" in sentence
    (tmp_path / "_internal" / "msvcp140.dll").write_bytes(b"MZ")
    (tmp_path / "_internal" / "msvcp140_atomic_wait.dll").write_bytes(b"MZ")
    assert check.missing_dlls(tmp_path, run=objdump) == []


def _mingw(tmp_path: Path, *args: str) -> None:
    subprocess.run([MINGW, *args], cwd=tmp_path, check=True, capture_output=True)


@pytest.fixture
def tiny_pe_bundle(tmp_path: Path) -> Path:
    """app.exe importing helper.dll (built) and MSVCP140.dll (an import library only)."""
    (tmp_path / "helper.c").write_text("__declspec(dllexport) int helper(void) { return 7; }\n")
    (tmp_path / "msvcp.def").write_text("LIBRARY MSVCP140.dll\nEXPORTS\n    cpp_helper\n")
    (tmp_path / "main.c").write_text(
        "__declspec(dllimport) int helper(void);\n"
        "__declspec(dllimport) int cpp_helper(void);\n"
        "int main(void) { return helper() + cpp_helper(); }\n"
    )
    bundle = tmp_path / "bundle"
    (bundle / "_internal").mkdir(parents=True)
    _mingw(tmp_path, "-shared", "-o", "bundle/_internal/helper.dll", "helper.c",
           "-Wl,--out-implib,libhelper.a")  # fmt: skip
    subprocess.run(
        ["x86_64-w64-mingw32-dlltool", "-d", "msvcp.def", "-l", "libmsvcp.a"],
        cwd=tmp_path,
        check=True,
    )
    _mingw(tmp_path, "-o", "bundle/app.exe", "main.c", "-L.", "-lhelper", "-lmsvcp")
    return bundle


@needs_mingw
def test_a_real_exe_importing_an_uncarried_dll_fails_and_passes_once_it_is_carried(
    tiny_pe_bundle: Path, tmp_path: Path
) -> None:
    imports = check.imported_dlls(tiny_pe_bundle / "app.exe")
    assert {"helper.dll", "MSVCP140.dll", "KERNEL32.dll"} <= set(imports)
    missing = check.missing_dlls(tiny_pe_bundle)
    assert [(m.importer, m.dll) for m in missing] == [(Path("app.exe"), "MSVCP140.dll")]
    assert check.main([str(tiny_pe_bundle)]) == 1
    (tmp_path / "stub.c").write_text("__declspec(dllexport) int cpp_helper(void) { return 1; }\n")
    _mingw(tmp_path, "-shared", "-o", "bundle/_internal/MSVCP140.dll", "stub.c")
    assert check.missing_dlls(tiny_pe_bundle) == []
    assert check.main([str(tiny_pe_bundle)]) == 0


# -- the NSIS script ----------------------------------------------------------------


def _nsi() -> str:
    return NSI.read_text(encoding="utf-8")


def test_the_install_is_per_user_without_administrator_rights() -> None:
    nsi = _nsi()
    assert "RequestExecutionLevel user" in nsi
    assert 'InstallDir "$LOCALAPPDATA\\Programs\\${APP_NAME}"' in nsi
    assert "HKLM" not in nsi  # every registry value is the user's


def test_start_at_sign_in_is_optional_and_the_value_the_app_writes() -> None:
    nsi = _nsi()
    assert f'!define RUN_KEY "{RUN_KEY}"' in nsi
    assert f'!define APP_NAME "{APP_NAME}"' in nsi
    assert 'Section /o "Start MeshNet when I sign in" SEC_AUTOSTART' in nsi  # unticked
    # The app's own Settings > Start at login writes the same: the exe, then --hidden.
    assert 'WriteRegStr HKCU "${RUN_KEY}" "${APP_NAME}" \'"$INSTDIR\\${APP_EXE}" --hidden\'' in nsi


def test_invite_links_open_the_app_with_join() -> None:
    nsi = _nsi()
    assert f'!define URL_SCHEME "{URL_SCHEME}"' in nsi
    assert 'WriteRegStr HKCU "Software\\Classes\\${URL_SCHEME}" "URL Protocol" ""' in nsi
    assert '\'"$INSTDIR\\${APP_EXE}" --join "%1"\'' in nsi
    assert 'DeleteRegKey HKCU "Software\\Classes\\${URL_SCHEME}"' in nsi  # uninstall


def test_the_uninstaller_deletes_user_data_only_when_asked() -> None:
    nsi = _nsi()
    purge = nsi[nsi.index("Function un.PurgeAsked") :]
    purge = purge[: purge.index("FunctionEnd")]
    assert "MB_DEFBUTTON2" in purge and "/SD IDNO" in purge  # default and silent: keep
    assert '"/PURGE="' in purge
    uninstall = nsi[nsi.index('Section "Uninstall"') :]
    assert uninstall.index("Call un.PurgeAsked") < uninstall.index('RMDir /r "${DATA_DIR}"')
    assert '!define DATA_DIR "$LOCALAPPDATA\\MeshNet"' in nsi  # core/paths.py's folder


def _stand_in_bundle(folder: Path) -> Path:
    bundle = folder / "meshnet"
    (bundle / "_internal").mkdir(parents=True)
    for name in ("meshnet-app.exe", "meshnet-node.exe"):
        (bundle / name).write_bytes(b"MZ stand-in")
    (bundle / "network.json").write_text("{}\n")
    return bundle


@needs_makensis
def test_the_script_compiles_with_makensis_warnings_as_errors(tmp_path: Path) -> None:
    from installers.layout import icons_source

    setup = tmp_path / "MeshNet-0.0.1-setup.exe"
    argv = makensis_argv(
        _stand_in_bundle(tmp_path), setup, version="0.0.1",
        icon=icons_source() / "app.ico", compressor="zlib",
    )  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert setup.read_bytes()[:2] == b"MZ"
    # 64-bit: it runs under 64-bit-only Wine, and its registry view is never redirected
    header = subprocess.run(["objdump", "-f", str(setup)], capture_output=True, text=True)
    assert "pei-x86-64" in header.stdout, header.stdout
    imports = check.imported_dlls(setup)
    assert all(check.is_system(dll) for dll in imports), imports


def test_an_unsigned_build_says_so_and_a_certificate_is_passed_to_osslsigncode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert sign(tmp_path / "setup.exe", environ={}) is False
    assert "UNSIGNED" in capsys.readouterr().out
    argv = sign_argv(Path("in.exe"), Path("out.exe"), "cert.pfx", "pw")
    assert argv[:2] == ["osslsigncode", "sign"] and "-t" in argv and "sha256" in argv


def test_the_visual_cpp_runtime_beside_python_is_named_for_the_bundle(tmp_path: Path) -> None:
    from installers.layout import MSVC_RUNTIME_DLLS, msvc_runtime_binaries

    for name in ("MSVCP140.dll", "msvcp140_atomic_wait.dll", "python312.dll"):
        (tmp_path / name).write_bytes(b"MZ")
    site_packages = tmp_path / "Lib" / "site-packages"
    site_packages.mkdir(parents=True)
    (site_packages / "vcomp140.dll").write_bytes(b"MZ")
    (site_packages / "msvcp140.dll").write_bytes(b"MZ")  # the prefix's copy wins
    found = msvc_runtime_binaries([tmp_path, site_packages, tmp_path / "absent"])
    assert sorted(Path(source).relative_to(tmp_path).as_posix() for source, _ in found) == [
        "Lib/site-packages/vcomp140.dll",
        "MSVCP140.dll",
        "msvcp140_atomic_wait.dll",
    ]
    assert all(dest == "." for _, dest in found)
    assert all(not check.is_system(dll) for dll in MSVC_RUNTIME_DLLS)


def test_an_empty_folder_is_no_bundle_to_pass(tmp_path: Path) -> None:
    assert check.main([str(tmp_path)]) == 2
