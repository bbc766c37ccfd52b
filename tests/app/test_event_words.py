"""Issue 37: the node's events are said from their codes in the user's language (de, es),
with the node's English kept only for a code the app does not know, and numbers and
percentages as the locale writes them."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.event_words import child_error_sentence, gate_words, progress_sentence
from app.status_model import WHY_BY_REASON, NodeStatus, gate_sentence
from app.texts import text
from app.ui.i18n import install_language
from app.ui.json_child import last_error_sentence


@pytest.fixture
def language(qapp: Any, request: pytest.FixtureRequest) -> Iterator[str]:
    chosen = request.param
    assert install_language(qapp, chosen) == chosen
    try:
        yield chosen
    finally:
        install_language(qapp, "en")


def progress(stage: str, done: int, total: int, message: str = "Unpacking model.gguf…") -> Any:
    data = {"stage": stage, "done": done, "total": total}
    return {"kind": "progress", "message": message, "data": data}


@pytest.mark.parametrize(
    ("language", "expected"),
    [
        ("en", "Preparing the model for this computer… 58%"),
        ("de", "Das Modell wird für diesen Computer vorbereitet… 58 %"),
        ("es", "Preparando el modelo para este ordenador… 58 %"),
    ],
    indirect=["language"],
)
def test_progress_is_said_from_its_stage_with_the_locales_percent(
    language: str, expected: str
) -> None:
    assert progress_sentence(progress("import", 58, 100)) == expected
    assert progress_sentence(progress("fetch", 0, 0)) == text("event.progress.fetch")
    # a stage this app does not know: the node's own sentence, not nothing
    assert progress_sentence(progress("defragment", 1, 2)) == "Unpacking model.gguf…"


@pytest.mark.parametrize("language", ["de"], indirect=True)
def test_details_rows_are_german_and_numbers_german_too(language: str) -> None:
    from app.ui.screenshots import serving_events

    status = NodeStatus()
    for event in serving_events(time.time()):
        status.apply(event)
    said = {name: gate_sentence(row, status) for name, row in status.gates.items()}
    assert said["registration"] == "Beim Tracker registriert."
    assert said["sessions"] == "2 offene Sitzungen, 12.480 Tokens bedient."
    assert said["capability"].startswith("Dieser Computer hat die Layer 0–15 korrekt mit 41,7")
    assert said["identity"].startswith("Identitätsschlüssel bereit: node-")
    # an unknown gate keeps its English sentence rather than saying nothing
    assert gate_words("warp-drive", "passed", None, {}, "Engaged.") == "Engaged."


@pytest.mark.parametrize("language", ["de", "es"], indirect=True)
def test_a_failure_says_its_reason_codes_sentence_and_never_the_code(language: str) -> None:
    line = "meshnet-node: Choose fewer layers: 3.1 GB do not fit in 2.0 GB. [out-of-memory]"
    assert child_error_sentence(line) == text("why.out-of-memory")
    assert "[" not in last_error_sentence(["noise", line], "fallback")
    unknown = "meshnet-node: The flux capacitor is cold. [flux-cold]"
    assert child_error_sentence(unknown) == "The flux capacitor is cold."
    assert gate_words("admission", "failed", "stale", {}, "too old") == text("why.stale")


def test_no_main_path_screen_shows_a_raw_reason_code(qapp: Any, tmp_path: Path) -> None:
    from app.ui.screenshots import render_all

    install_language(qapp, "de")
    try:
        assert render_all(tmp_path, qapp) == 0
    finally:
        install_language(qapp, "en")
    codes = [code for code in WHY_BY_REASON if "-" in code]
    bracketed = re.compile(r"\[[a-z0-9]+(-[a-z0-9]+)+\]")
    found = {}
    for screen in json.loads((tmp_path / "texts.json").read_text("utf-8")):
        if not screen["main_path"]:
            continue
        raw = [t for t in screen["texts"] if bracketed.search(t) or any(c in t for c in codes)]
        if raw:
            found[screen["screen"]] = raw
    assert found == {}
