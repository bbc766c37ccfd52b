"""No file of the repository carries a merge's conflict markers (a README once did)."""

from __future__ import annotations

import re
import subprocess

from tests.reason_codes import ROOT

# A marker opens a line; "=======" alone is left out (it underlines reST headings).
MARKER = re.compile(rb"^(<{7} |>{7} |\|{7} )", re.MULTILINE)


def test_no_tracked_file_has_conflict_markers() -> None:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    offenders = []
    for name in filter(None, listed.split(b"\0")):
        path = ROOT / name.decode()
        if not path.is_file() or path.stat().st_size > 2 * 1024 * 1024:
            continue
        if MARKER.search(path.read_bytes()):
            offenders.append(name.decode())
    assert not offenders, f"conflict markers left in: {offenders}"


def test_the_marker_pattern_finds_a_real_conflict() -> None:
    conflicted = b"a\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> branch\n"
    assert MARKER.search(conflicted)
    assert not MARKER.search(b"Title\n=======\n<<< not a marker\n")
