"""The chat page's markdown renderer against an answer full of unclosed markup.

A node that serves answers chooses their text. The renderer searched for each
opener's closer with a lazy pattern, so an unclosed ``**`` repeated n times cost n^2
steps in the reader's browser (200,000 such characters froze the page for minutes), and
a heading full of spaces cost the same.
The renderer runs here in node (with a small DOM stand-in); the browser tests in
tests/tracker_service/api/test_chat_browser.py check what it builds in Chromium.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RENDERER = ROOT / "tracker_service" / "static" / "chat_markdown.js"
HARNESS = Path(__file__).with_name("markdown_node.js")
# A linear renderer takes well under a second for this; the quadratic one took hours.
REPEATS = 50_000
BOUND_S = 300  # how long to wait for it at most, on a loaded machine


def _node(*args: str) -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (Debian: nodejs)")
    try:
        done = subprocess.run(
            [node, str(HARNESS), str(RENDERER), *args],
            capture_output=True,
            text=True,
            timeout=BOUND_S,
            check=True,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the renderer was still working after {BOUND_S} s on {args}")
    return done.stdout


def test_unclosed_markup_renders_without_stalling() -> None:
    out = _node("unclosed", str(REPEATS))
    assert out.startswith("rendered "), out


@pytest.mark.parametrize("seed", [3, 11, 1234])
def test_renderer_matches_the_inline_patterns(seed: int) -> None:
    """The linear scanner finds exactly what the documented patterns find."""
    out = _node("compare", str(seed))
    assert out.strip().endswith("differences: 0"), out
