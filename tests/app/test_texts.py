"""The main path's words (app/texts.py): plain, and translated into German and Spanish."""

from __future__ import annotations

import re
import string

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
