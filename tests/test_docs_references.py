"""The contracts live in ``docs/``, and what cites them points at something real.

Every ``docs/<file>.md#anchor`` a file of the repository cites must name an
existing file and heading; nothing may cite a design file outside the
repository (``../shared``, ``notes/``, ``seeds/``); and every reason code the
code emits must be listed in ``docs/wire.md``, so the document cannot drift
from the code.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

import pytest

from tests.reason_codes import ROOT, _codes_in, emitted_reason_codes

DOCS = ROOT / "docs"
WIRE = DOCS / "wire.md"
TEXT_SUFFIXES = {
    ".py", ".md", ".json", ".toml", ".txt", ".sh", ".cfg", ".ini", ".yml", ".yaml",
    ".html", ".js", ".css", ".spec", ".iss", ".desktop", ".in",
}  # fmt: skip
SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", "build", "dist", ".mypy_cache"}
SKIP_DIRS |= {".ruff_cache", ".pytest_cache", ".hypothesis", ".meshnet"}
MAX_BYTES = 2 * 1024 * 1024
THIS_FILE = Path(__file__).resolve()

# docs/<path>.md with an optional #anchor, as code and text cite it.
DOC_CITATION = re.compile(r"docs/([A-Za-z0-9_./-]+?\.md)(#[A-Za-z0-9_-]+)?")
# A markdown link inside docs/: [text](target.md#anchor) or [text](#anchor).
MD_LINK = re.compile(r"\]\(([^)\s]*?)(#[A-Za-z0-9_-]+)?\)")
# Design files outside the repository, or folders it does not have.
OUTSIDE = re.compile(
    r"\.\./shared|/work/shared|shared/(DESIGN|STYLE)\.md|(?<![\w/.-])(notes|seeds)/"
)


def _text_files() -> list[Path]:
    found = []
    for path in ROOT.rglob("*"):
        parts = path.relative_to(ROOT).parts
        # any virtualenv (CI's .venv-lowest too) holds other projects' docs, not ours
        if any(part in SKIP_DIRS or part.startswith(".venv") for part in parts):
            continue
        if path.suffix in TEXT_SUFFIXES and path.is_file() and path.stat().st_size <= MAX_BYTES:
            found.append(path)
    return sorted(found)


def github_anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives a document's headings (duplicates get -1, -2, ...)."""
    anchors: set[str] = set()
    seen: Counter[str] = Counter()
    in_fence = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            in_fence = not in_fence
            continue
        heading = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if in_fence or heading is None:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading.group(1).lower()).replace(" ", "-")
        anchors.add(slug if not seen[slug] else f"{slug}-{seen[slug]}")
        seen[slug] += 1
    return anchors


def _shown(path: Path) -> str:
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)


def _problem(target: Path, anchor: str | None) -> str | None:
    if not target.is_file():
        return f"{_shown(target)} does not exist"
    if anchor and anchor.lstrip("#") not in github_anchors(target.read_text(encoding="utf-8")):
        return f"{_shown(target)} has no heading for {anchor}"
    return None


def dangling_citations() -> list[str]:
    problems = []
    doc_names = {p.name for p in DOCS.glob("*.md")}
    bare = re.compile(r"(?<![\w/.-])(" + "|".join(map(re.escape, sorted(doc_names))) + r")\b")
    for path in _text_files():
        if path == THIS_FILE:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        where = _shown(path)
        for number, line in enumerate(text.splitlines(), 1):
            for match in DOC_CITATION.finditer(line):
                problem = _problem(DOCS / match.group(1), match.group(2))
                if problem:
                    problems.append(f"{where}:{number}: cites docs/{match.group(1)}: {problem}")
            if OUTSIDE.search(line):
                problems.append(f"{where}:{number}: cites a file outside the repository")
            named = bare.search(line) if path.parent != DOCS and doc_names else None
            if named is not None:
                problems.append(f"{where}:{number}: cites {named[0]} without docs/")
            if path.parent == DOCS and path.suffix == ".md":
                for match in MD_LINK.finditer(line):
                    target, anchor = match.group(1), match.group(2)
                    if "://" in target or (not target.endswith(".md") and target):
                        continue
                    problem = _problem(DOCS / target if target else path, anchor)
                    if problem:
                        problems.append(f"{where}:{number}: links {match.group(0)[1:]}: {problem}")
    return problems


def test_the_contracts_are_documented_inside_the_repository() -> None:
    for name in ("architecture.md", "wire.md", "jobs.md"):
        assert (DOCS / name).is_file(), f"docs/{name} is missing"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/architecture.md" in readme and "docs/wire.md" in readme


def test_every_docs_citation_names_an_existing_file_and_heading() -> None:
    assert dangling_citations() == []


def test_the_reference_check_catches_a_dangling_anchor_and_an_outside_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cited = tmp_path / "cites.py"
    cited.write_text(
        '"""See docs/wire.md#no-such-heading and ../shared/DESIGN.md and notes/wire.md."""\n'
    )
    monkeypatch.setattr("tests.test_docs_references._text_files", lambda: [cited])
    problems = dangling_citations()
    assert any("no heading for #no-such-heading" in p for p in problems), problems
    assert sum("outside the repository" in p for p in problems) == 1, problems


def test_github_anchors_follow_githubs_rules() -> None:
    text = "# Wire\n## Data-plane session codes\n```\n# not a heading\n```\n## Frames\n## Frames\n"
    assert github_anchors(text) == {"wire", "data-plane-session-codes", "frames", "frames-1"}


def test_every_reason_code_the_code_emits_is_listed_in_wire_md() -> None:
    listed = set(re.findall(r"`([a-z][a-z0-9_-]*)`", WIRE.read_text(encoding="utf-8")))
    missing = sorted({f"{f.code} ({f.path}:{f.line})" for f in emitted_reason_codes()
                      if f.code not in listed})  # fmt: skip
    assert missing == [], "reason codes emitted but not listed in docs/wire.md#reason-codes"


def test_the_reason_code_scan_finds_codes_in_every_form_the_code_uses() -> None:
    codes = {found.code for found in emitted_reason_codes()}
    # A wire constant, a tracker refusal, a store refusal, a gateway code, a kwarg.
    assert {"bad-ticket", "nonce-reused", "lease-lost", "invalid_api_key", "probe-bad"} <= codes
    snippet = ast.parse(
        'raise ProtocolError("no", reason="brand-new-code")\n'
        'x = {"reason": "another-new-code"}\n'
        'raise refuse(409, "third-new-code", "sentence")\n'
    )
    assert {code for code, _ in _codes_in(snippet)} == {
        "brand-new-code",
        "another-new-code",
        "third-new-code",
    }
