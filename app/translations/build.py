"""Keep the translations in step with app.texts and compile them.

``python -m app.translations.build`` rewrites each ``meshnet_<lang>.ts`` with
every string of :data:`app.texts.TEXTS` and :data:`app.details_texts.DETAILS_TEXTS`
(a new string is added unfinished, a string no longer used is dropped, a translation
is kept), then compiles the
``.qm`` beside it with ``pyside6-lrelease``. Translators edit the ``.ts``
files (Qt Linguist opens them); ``tests/app/test_texts.py`` fails when
a string has no finished translation.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from app.details_texts import DETAILS_TEXTS
from app.texts import CONTEXT, TEXTS

# every string the app shows: the main path and the engineer's views
ALL_TEXTS: dict[str, str] = {**TEXTS, **DETAILS_TEXTS}

log = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
LANGUAGES = ("de", "es")


def ts_path(language: str) -> Path:
    return HERE / f"meshnet_{language}.ts"


def read_ts(path: Path) -> dict[str, str]:
    """source -> finished translation, from a .ts file (unfinished ones left out)."""
    if not path.exists():
        return {}
    found: dict[str, str] = {}
    for message in ET.parse(path).getroot().iter("message"):
        source = message.findtext("source") or ""
        translation = message.find("translation")
        if translation is None or translation.get("type") in ("unfinished", "obsolete"):
            continue
        if translation.text:
            found[source] = translation.text
    return found


def write_ts(language: str, translations: dict[str, str]) -> Path:
    root = ET.Element("TS", version="2.1", language=language)
    context = ET.SubElement(root, "context")
    ET.SubElement(context, "name").text = CONTEXT
    keys: dict[str, list[str]] = {}  # one message per source text, as Qt looks them up
    for key, source in ALL_TEXTS.items():
        keys.setdefault(source, []).append(key)
    for source, names in keys.items():
        message = ET.SubElement(context, "message")
        ET.SubElement(message, "source").text = source
        # a note for translators, not part of the lookup (a <comment> would be)
        ET.SubElement(message, "extracomment").text = ", ".join(names)
        translation = ET.SubElement(message, "translation")
        if source in translations:
            translation.text = translations[source]
        else:
            translation.set("type", "unfinished")
    ET.indent(root)
    path = ts_path(language)
    body = ET.tostring(root, encoding="unicode")
    path.write_text(
        '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE TS>\n' + body + "\n", encoding="utf-8"
    )
    return path


def lrelease() -> str:
    beside = Path(sys.executable).with_name("pyside6-lrelease")
    found = str(beside) if beside.exists() else shutil.which("pyside6-lrelease")
    if not found:
        raise SystemExit("pyside6-lrelease not found: install PySide6 (it ships the tool)")
    return found


def compile_ts(path: Path) -> Path:
    target = path.with_suffix(".qm")
    subprocess.run([lrelease(), "-silent", str(path), "-qm", str(target)], check=True)
    return target


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    for language in LANGUAGES:
        kept = read_ts(ts_path(language))
        path = write_ts(language, kept)
        missing = [source for source in ALL_TEXTS.values() if source not in kept]
        log.info("%s: %d strings, %d without a translation", path.name, len(kept), len(missing))
        log.info("compiled %s", compile_ts(path).name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
