"""The one exception tree of the node core.

Lower-layer errors (safetensors, httpx, cryptography, torch) are mapped to these
where they enter, with ``raise ... from exc``, so callers catch MeshnetError and
show its message; ``reason`` is a stable machine-readable code.

    MeshnetError
    ├── ConfigError                 bad settings or arguments
    ├── ModelError                  model files missing, corrupt or unsupported
    │   ├── UnsupportedArchitecture
    │   └── ModelImportError
    ├── RuntimeInputError           a tensor or request the runtime cannot accept
    │   ├── ShapeError              wrong hidden size, dtype or rank
    │   ├── RangeError              layer range outside the model
    │   └── PositionError           positions past the session's max_length
    ├── SessionError                session unknown, closed or expired
    │   └── CapacityError           not enough memory reserved to open it
    ├── IdentityError               key pair missing, keyring unusable
    ├── AdmissionRefused            (core.admission.CapabilityAdmissionError)
    ├── DoctorError                 the capability probe could not run
    │   └── ProbeTimeout            (core.doctor_probe) past the probe's deadline
    ├── Cancelled                   (core.progress) a stop asked during a long step
    ├── ProtocolError               a bad wire frame or signature
    │   └── TicketError             a route ticket that does not admit the session
    └── TrackerError                the tracker refused or could not be reached
"""

from __future__ import annotations


class MeshnetError(Exception):
    """Root of every error the node core raises on purpose."""

    reason: str = "error"

    def __init__(self, message: str, *, reason: str | None = None) -> None:
        super().__init__(message)
        if reason is not None:
            self.reason = reason

    @property
    def message(self) -> str:
        return str(self)


class ConfigError(MeshnetError):
    reason = "bad-config"


class ModelError(MeshnetError):
    reason = "model-error"


class UnsupportedArchitecture(ModelError):
    reason = "unsupported-architecture"


class ModelImportError(ModelError):
    reason = "import-failed"


class RuntimeInputError(MeshnetError):
    reason = "bad-input"


class ShapeError(RuntimeInputError):
    reason = "bad-shape"


class RangeError(RuntimeInputError):
    reason = "bad-range"


class PositionError(RuntimeInputError):
    reason = "position-out-of-range"


class SessionError(MeshnetError):
    reason = "session-error"


class CapacityError(SessionError):
    reason = "no-capacity"


class IdentityError(MeshnetError):
    reason = "identity-error"


class DoctorError(MeshnetError):
    reason = "doctor-error"


class ProtocolError(MeshnetError):
    reason = "bad-frame"


class TicketError(ProtocolError):
    reason = "bad-ticket"


class TrackerError(MeshnetError):
    reason = "tracker-error"
