"""The app's settings kept with QSettings (registry, plist or ini, as the OS prefers).

Each :class:`~app.settings_model.AppSettings` field is stored under its own key
as JSON text: QSettings backends disagree on types (an ini file gives back
every value as a string, the registry keeps ints), and JSON text reads back
the same everywhere. Reading is tolerant (``settings_from_dict``), so a value
written by an older or newer app never stops this one from starting.

Tests point QSettings elsewhere with ``QSettings.setDefaultFormat(IniFormat)``
and ``QSettings.setPath(IniFormat, UserScope, tmp)``, or pass their own QSettings.
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from typing import Any

from PySide6.QtCore import QObject, QSettings, Signal

from app.settings_model import AppSettings, settings_from_dict, settings_to_dict

log = logging.getLogger(__name__)

ORGANISATION = "MeshNet"
APPLICATION = "MeshNet"
_GROUP = "settings"
_HARDWARE_KEY = "cache/hardware"
_CREDIT_LINK_KEY = "cache/credit_link"


def default_qsettings() -> QSettings:
    """The user's settings store (the default format, so tests can redirect it)."""
    return QSettings(
        QSettings.defaultFormat(), QSettings.Scope.UserScope, ORGANISATION, APPLICATION
    )


class SettingsStore(QObject):
    """Load and save :class:`AppSettings`; ``changed`` carries the saved settings."""

    changed = Signal(object)

    def __init__(self, settings: QSettings | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._settings = settings if settings is not None else default_qsettings()
        if self._settings.parent() is None:
            self._settings.setParent(self)

    @property
    def location(self) -> str:
        """Where the settings live (a file path or registry key), for diagnostics."""
        return self._settings.fileName()

    def load(self) -> AppSettings:
        raw: dict[str, Any] = {}
        self._settings.beginGroup(_GROUP)
        try:
            for key in self._settings.childKeys():
                value = self._settings.value(key)
                try:
                    raw[key] = json.loads(value) if isinstance(value, str) else value
                except json.JSONDecodeError:
                    log.warning("ignoring unreadable setting %s=%r", key, value)
        finally:
            self._settings.endGroup()
        return settings_from_dict(raw)

    def save(self, settings: AppSettings) -> None:
        self._settings.beginGroup(_GROUP)
        try:
            for key, value in settings_to_dict(settings).items():
                self._settings.setValue(key, json.dumps(value))
        finally:
            self._settings.endGroup()
        self._settings.sync()
        if self._settings.status() != QSettings.Status.NoError:
            log.warning("settings not written to %s: %s", self.location, self._settings.status())
        self.changed.emit(settings)

    def never_saved(self) -> bool:
        """True on a first launch: nothing was ever saved here (the app then opens the doctor)."""
        self._settings.beginGroup(_GROUP)
        try:
            return not self._settings.childKeys()
        finally:
            self._settings.endGroup()

    def update(self, **changes: Any) -> AppSettings:
        """Save the current settings with ``changes`` applied; returns them."""
        settings = replace(self.load(), **changes)
        self.save(settings)
        return settings

    def _cached(self, key: str) -> dict[str, Any] | None:
        value = self._settings.value(key)
        if not isinstance(value, str):
            return None
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            return None
        return parsed if isinstance(parsed, dict) else None

    def _cache(self, key: str, value: dict[str, Any]) -> None:
        self._settings.setValue(key, json.dumps(value))
        self._settings.sync()

    def last_hardware(self) -> dict[str, Any] | None:
        """The last ``meshnet-node hardware --json`` result the wizard saw, if any.

        The settings dialog offers the devices found there without starting a
        child of its own.
        """
        return self._cached(_HARDWARE_KEY)

    def save_hardware(self, hardware: dict[str, Any]) -> None:
        self._cache(_HARDWARE_KEY, hardware)

    def credit_link(self) -> dict[str, Any] | None:
        """The leaderboard name and team a tracker last accepted (app/credit_link.py)."""
        return self._cached(_CREDIT_LINK_KEY)

    def save_credit_link(self, record: dict[str, Any]) -> None:
        self._cache(_CREDIT_LINK_KEY, record)
