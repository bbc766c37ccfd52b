"""The app's language: Qt's translator with the compiled catalogues beside this package.

``app/translations/meshnet_<lang>.ts`` are the sources (Qt Linguist XML, one
``meshnet`` context holding :data:`app.texts.TEXTS`); ``meshnet_<lang>.qm`` are
compiled from them with ``pyside6-lrelease`` (``python -m app.translations.build``).
The app follows the system's language unless ``--language`` says otherwise;
English needs no catalogue.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QTranslator

from app import texts

log = logging.getLogger(__name__)

TRANSLATIONS = Path(__file__).resolve().parents[1] / "translations"
LANGUAGES = ("en", "de", "es")
_installed: list[QTranslator] = []


def catalogue(language: str) -> Path:
    return TRANSLATIONS / f"meshnet_{language}.qm"


def number_formatter(language: str) -> Callable[[float, int], str]:
    """``(value, decimals) -> text`` in ``language``'s digits: de 63.040 and 18,42,
    es 63.040 and 18,42 (but 1234: Spanish groups from five digits), en 63,040 and 18.42."""
    locale = QLocale(language)

    def format_number(value: float, decimals: int) -> str:
        return locale.toString(float(value), "f", decimals)

    return format_number


def _qt_translate(context: str, source: str) -> str:
    return QCoreApplication.translate(context, source)


def install_language(app: QCoreApplication, language: str | None = None) -> str:
    """Load ``language`` (or the system's) and route app.texts through Qt; returns the
    language in use. An unknown language falls back to English with a log line."""
    for old in _installed:
        app.removeTranslator(old)
    _installed.clear()
    texts.set_translator(_qt_translate)
    wanted = (language or QLocale.system().name()).split("_")[0].lower()
    if wanted not in LANGUAGES:
        if language:
            log.warning("no translation for %r; showing English (have: %s)", language, LANGUAGES)
        wanted = "en"
    translator = QTranslator(app)
    if wanted != "en" and not translator.load(str(catalogue(wanted))):
        log.warning("could not load %s; showing English", catalogue(wanted))
        wanted = "en"
    texts.set_number_formatter(number_formatter(wanted))
    # told to app.texts, not QLocale.setDefault: changing Qt's default under running
    # widgets segfaulted test_plain_screens.py's keyboard walk (2 runs in 3)
    texts.set_language(wanted)
    if wanted == "en":
        return "en"
    app.installTranslator(translator)
    _installed.append(translator)
    # Qt's own words (the wizard's Back/Next/Cancel, the line edits' menus)
    qt_words = QTranslator(app)
    qt_folder = QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
    if qt_words.load(f"qtbase_{wanted}", qt_folder):
        app.installTranslator(qt_words)
        _installed.append(qt_words)
    return wanted
