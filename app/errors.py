"""The app's exceptions, in one place: each a ``core.errors.MeshnetError`` (a stable
``reason`` and a sentence for people), so the GUI's one error path (app/ui/errors.py)
shows its words::

    MeshnetError (core/errors.py)
    ├── GatewayCallFailed    the gateway refused or broke a chat (meshnet chat)
    ├── AutostartError       the start-at-login entry could not be written or removed
    ├── TrackerReadError     the tracker's state, network or recipes could not be read
    └── GpuRuntimeError      the GPU runtime download failed or did not check out
        └── DownloadCancelled    the user cancelled it (the partial file is kept)

    ValueError
    └── StoredValueUnreadable   a saved setting is not of its field's type (the field
                                 falls back to its default; never shown to anyone)
"""

from __future__ import annotations

from core.errors import MeshnetError


class GatewayCallFailed(MeshnetError):
    reason = "gateway-error"


class AutostartError(MeshnetError):
    """The login entry could not be written or removed; the message says what to do."""

    reason = "autostart-failed"


class TrackerReadError(MeshnetError):
    """The tracker could not be read; the message says what to do.

    reason: bad-url, connection-refused, timeout, not-meshnet, http-error, unreachable.
    """

    reason = "tracker-read-failed"

    @property
    def sentence(self) -> str:
        return str(self)


class GpuRuntimeError(MeshnetError):
    reason = "gpu-runtime"


class DownloadCancelled(GpuRuntimeError):
    reason = "gpu-runtime-cancelled"


class StoredValueUnreadable(ValueError):
    """A stored value that cannot be read as its field's type."""
