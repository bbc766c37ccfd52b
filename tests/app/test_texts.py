"""The main path's words (app/texts.py): plain, and translated into German and Spanish."""

from __future__ import annotations

import ast
import re
import string
from pathlib import Path
from typing import Any

import pytest

from app.texts import FORBIDDEN_WORDS, TEXTS, forbidden_words_in
from app.translations.build import ALL_TEXTS, LANGUAGES, read_ts, ts_path


def test_the_scan_finds_each_engineering_word_and_spares_ordinary_ones() -> None:
    for word in FORBIDDEN_WORDS:
        assert forbidden_words_in(f"A sentence with {word.upper()} in it.") == [word]
    assert forbidden_words_in("Serving layers 0–15 over ws://1.2.3.4:80") == ["layers", "ws://"]
    # "report", "support", "darker", "tokenizer" are not the words themselves
    assert forbidden_words_in("The report supports a darker theme and a tokenizer.") == []


def test_no_main_path_string_uses_an_engineering_word() -> None:
    found = {key: forbidden_words_in(source) for key, source in TEXTS.items()}
    assert {key: words for key, words in found.items() if words} == {}


def _fields(sentence: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(sentence) if name}


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_main_path_string_has_a_translation_with_the_same_blanks(language: str) -> None:
    translated = read_ts(ts_path(language))
    # the main path and the engineer's views (Details, Settings, Recipes) alike
    missing = [key for key, source in ALL_TEXTS.items() if source not in translated]
    assert missing == [], f"{language}: no translation for {missing}"
    for key, source in ALL_TEXTS.items():
        target = translated[source]
        assert _fields(target) == _fields(source), (language, key, target)
        # a keyboard shortcut (&) in English has one in the translation too
        assert ("&" in source) == bool(re.search(r"&\w", target)), (language, key, target)
        words = re.sub(r"\{\w+\}|MeshNet|[^\w]", "", source)
        assert target != source or len(words) < 10, (language, key, "left in English")


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_compiled_catalogue_matches_its_source(language: str) -> None:
    from PySide6.QtCore import QTranslator

    from app.texts import CONTEXT
    from app.ui.i18n import catalogue

    translator = QTranslator()
    assert translator.load(str(catalogue(language)))
    translated = read_ts(ts_path(language))
    stale = [s for s in ALL_TEXTS.values() if translator.translate(CONTEXT, s) != translated[s]]
    assert stale == [], "run python -m app.translations.build"


@pytest.mark.parametrize(
    ("language", "count", "credit", "small"),
    [
        ("en", "63,040", "18.42", "1,234"),
        ("de", "63.040", "18,42", "1.234"),
        ("es", "63.040", "18,42", "1234"),
    ],
)
def test_numbers_follow_the_chosen_language(
    qapp: object, language: str, count: str, credit: str, small: str
) -> None:
    from app.credit_summary import credit_figure
    from app.status_model import format_count
    from app.texts import set_number_formatter
    from app.ui.i18n import number_formatter

    set_number_formatter(number_formatter(language))
    try:
        assert (format_count(63_040), credit_figure(18.42), format_count(1234)) == (
            count,
            credit,
            small,  # Spanish groups from five digits on (CLDR)
        )
    finally:
        set_number_formatter(number_formatter("en"))


# Modules whose sentences reach the user (settings problems, the tracker check, the
# apology, the app's own words about the node, join refusals, durations): every
# sentence comes from the catalogue, none is an English literal in the code.
SPEAKING_MODULES = (
    "app/settings_model.py",
    "app/tracker_api.py",
    "app/network_join.py",
    "app/autostart.py",
    "app/ui/errors.py",
    "app/ui/controller.py",
    "app/ui/node_process.py",
    "app/ui/widgets/usage_chart.py",
    "app/ui/screens/settings/hub_download.py",
)
# the login entry's .desktop comment is written once, for the desktop's own menus
NOT_SHOWN_BY_THE_APP = {"Comment=Lend this PC's GPU to the MeshNet network"}
_PROGRAMMING_ERRORS = {"RuntimeError", "ValueError", "TypeError", "KeyError", "AssertionError"}


def _sentence_literals(path: Path) -> list[str]:
    """String literals of three words or more, leaving out docstrings, log calls and
    programming errors (for the log, not the user)."""
    tree = ast.parse(path.read_text("utf-8"))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            skipped.add(id(body[0].value))  # a docstring
        if isinstance(node, ast.Call):
            func = node.func
            logs = isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
            logs = logs and func.value.id == "log"  # type: ignore[union-attr]
            raises = isinstance(func, ast.Name) and func.id in _PROGRAMMING_ERRORS
            if logs or raises:
                skipped.update(id(inner) for inner in ast.walk(node))
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in skipped
        and len(re.findall(r"[A-Za-z]{2,}", node.value)) >= 3
        and len(node.value.split()) >= 3
        and node.value not in NOT_SHOWN_BY_THE_APP
    ]


def test_the_speaking_modules_take_every_sentence_from_the_catalogue() -> None:
    root = Path(__file__).resolve().parents[2]
    found = {name: _sentence_literals(root / name) for name in SPEAKING_MODULES}
    assert {name: literals for name, literals in found.items() if literals} == {}
    # the scan is not blind: an English sentence in code is found
    assert _sentence_literals(Path(__file__)) != []


def test_the_apps_own_sentences_speak_the_chosen_language(qapp: Any) -> None:
    import httpx

    from app.errors import TrackerReadError
    from app.network_join import refusal_text
    from app.settings_model import AppSettings, validate_settings
    from app.status_model import format_duration
    from app.tracker_api import check_tracker
    from app.ui.controller import crash_sentence
    from app.ui.errors import apology
    from app.ui.i18n import install_language
    from app.ui.widgets.usage_chart import _local_time

    sunday_noon = 3 * 86_400 + 43_200  # 4 January 1970, a Sunday in every time zone
    state = {"generated_at": 0.0, "models": [], "recipes": [], "nodes": [], "nodes_total_live": 1}
    answers = httpx.MockTransport(lambda _request: httpx.Response(200, json=state))
    missing = httpx.MockTransport(lambda _request: httpx.Response(404))
    assert install_language(qapp, "de") == "de"
    try:
        problems = validate_settings(AppSettings(idle_minutes=0, layers=(4, 2)))
        assert problems["idle_minutes"].startswith("Wählen Sie zwischen 1 und 240 Minuten")
        assert problems["layers"].startswith("Schichten 4–2 sind ein leerer Bereich")
        assert check_tracker("http://t.example", transport=answers).sentence == (
            "Mit einem MeshNet-Tracker verbunden: 1 aktiver Knoten, 0 Rezepte."
        )
        with pytest.raises(TrackerReadError) as refused:
            check_tracker("http://t.example", transport=missing)
        assert str(refused.value) == (
            "http://t.example ist kein MeshNet-Tracker (er hat keine MeshNet-Statusseite): "
            "Prüfen Sie Adresse und Port."
        )
        assert "„Diagnose kopieren“ im Status-Fenster" in apology()  # the button's own label
        assert crash_sentence(-1, None)[1].startswith("Der Knoten hat unerwartet angehalten")
        assert refusal_text("invite-expired").startswith("Diese Einladung ist abgelaufen.")
        assert [format_duration(s) for s in (42, 300, 7_500, 3 * 86_400 + 4 * 3_600)] == [
            "42 s",
            "5 min",
            "2 h 05 min",
            "3 T 4 h",
        ]
        assert _local_time(sunday_noon, "dddd") == "Sonntag"  # the usage chart's day names
        assert install_language(qapp, "es") == "es"
        assert format_duration(3 * 86_400) == "3 d 0 h"
        assert "«Copiar diagnóstico»" in apology()
        assert _local_time(sunday_noon, "dddd") == "domingo"
    finally:
        install_language(qapp, "en")
    assert format_duration(7_500) == "2 h 05 min" and _local_time(sunday_noon, "dddd") == "Sunday"
    assert apology().endswith("use Copy diagnostics in the Status window.")
