"""The one exception tree of the node core.

Lower-layer errors (safetensors, httpx, cryptography, torch) are mapped to these
where they enter, with ``raise ... from exc``, so callers catch MeshnetError and
show its message; ``reason`` is a stable machine-readable code. Every class is
defined here, in this file; a module named in parentheses is where it is raised.

    MeshnetError
    ├── ConfigError                 bad settings or arguments
    ├── ModelError                  model files missing, corrupt or unsupported
    │   ├── UnsupportedArchitecture
    │   └── ModelImportError
    ├── RecipeError                 (core.recipes.catalogue) unknown recipe, or not the one run
    ├── RecipeIdentityError         (core.recipes.recipe_identity) a malformed identity block
    │   └── FingerprintMismatch     the fingerprint is not the digest of the axes
    ├── RuntimeInputError           a tensor or request the runtime cannot accept
    │   ├── ShapeError              wrong hidden size, dtype or rank
    │   ├── RangeError              layer range outside the model
    │   └── PositionError           positions past the session's max_length
    ├── SessionError                session unknown, closed or expired
    │   └── CapacityError           not enough memory reserved to open it
    ├── IdentityError               key pair missing, keyring unusable
    │   └── AclError                (core.identity.windows_acl) a key file's access list refused
    ├── InviteError                 (core.network.invites) a join link malformed or not trusted
    ├── CapabilityAdmissionError    (core.doctor.admission_gate) the proof does not cover it
    ├── TooLittleMemory             (core.doctor.placement_advice) no useful range fits
    ├── DoctorError                 the capability probe could not run
    │   └── ProbeTimeout            (core.doctor.probe) past the probe's deadline
    ├── Cancelled                   (core.progress) a stop asked during a long step, or a
    │                               batch task killed because its lease was lost
    ├── ProtocolError               a bad wire frame or signature
    │   ├── TicketError             a route ticket that does not admit the session
    │   └── PinMismatch             (core.dataplane.tls) a node's certificate is not its pin
    ├── TrackerCallFailed           the tracker refused or could not be reached
    │   ├── TrackerUnreachable      (core.network.tracker_client) no answer
    │   ├── TrackerRefused          (core.network.tracker_client) an answer that says no
    │   │   └── ReRegisterRequired  the tracker forgot this node: register again
    │   └── LeaseLost               (core.jobs.client) 410: the task's lease expired or moved
    └── JobError                    a batch task refused or failed
        ├── TaskExecutionError      (core.jobs.runner) reported to the tracker
        ├── ArchiveError            (core.jobs.archives) an input archive refused as unsafe
        └── KeyringFailed           (core.jobs.credentials) the OS keyring failed at logout

Every exception class in ``core/`` is defined in this file and sits in this tree
(tests/core/test_error_tree.py).
No name is defined twice here. Three names recur in tracker_service's tree with the
same meaning, the same check made independently there (the tracker never imports
core): PinMismatch, RecipeIdentityError, FingerprintMismatch. Any other name shared
with the tracker or the app is a collision (tests/support/error_names.py).
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


class RecipeError(MeshnetError):
    """A recipe is unknown, or the loaded shard does not run the recipe it names."""

    reason = "recipe-error"


class RecipeIdentityError(MeshnetError, ValueError):
    """An identity block is malformed or internally inconsistent."""

    reason = "bad-identity"


class FingerprintMismatch(RecipeIdentityError):
    """The declared fingerprint is not the digest of the declared axes."""

    reason = "fingerprint-mismatch"


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


class AclError(IdentityError, OSError):
    """icacls could not set or read a file's list."""

    reason = "key-file-acl"


class InviteError(MeshnetError):
    reason = "bad-invite-link"


class CapabilityAdmissionError(MeshnetError, RuntimeError):
    """This node may not advertise the selection: the proof does not cover it."""

    reason = "admission-refused"

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message, reason=reason)


class TooLittleMemory(MeshnetError):
    """No useful range of the model fits in this machine's memory."""

    reason = "too-little-memory"


class DoctorError(MeshnetError):
    reason = "doctor-error"


class ProbeTimeout(DoctorError):
    reason = "probe-timeout"


class Cancelled(MeshnetError):
    """A stop was asked while a step ran; the step stopped at its next progress point."""

    reason = "cancelled"


class ProtocolError(MeshnetError):
    reason = "bad-frame"


class TicketError(ProtocolError):
    reason = "bad-ticket"


class PinMismatch(ProtocolError):
    """The peer's certificate is not the one its node registered: nothing is sent."""

    reason = "tls-pin-mismatch"


class TrackerCallFailed(MeshnetError):
    reason = "tracker-error"


class TrackerUnreachable(TrackerCallFailed):
    reason = "tracker-unreachable"


class TrackerRefused(TrackerCallFailed):
    """The tracker answered with a refusal; ``reason`` is its code, the message its sentence."""

    def __init__(self, status_code: int, reason: str, detail: str) -> None:
        super().__init__(f"the tracker refused ({status_code} {reason}): {detail}", reason=reason)
        self.status_code = status_code
        self.detail = detail


class ReRegisterRequired(TrackerRefused):
    """The tracker no longer knows this node (expired, restarted): register again."""


class LeaseLost(TrackerCallFailed):
    """The tracker answered 410: the lease expired or was superseded."""

    reason = "lease-lost"


class JobError(MeshnetError):
    reason = "job-error"


class TaskExecutionError(JobError):
    """The task was refused or its workload failed; the message is reported to the tracker."""

    reason = "task-failed"


class ArchiveError(JobError):
    """The archive is refused; the message says which member and why."""

    reason = "unsafe-archive"


class KeyringFailed(JobError):
    """The OS keyring refused an operation; the message says what to do."""

    reason = "keyring-error"
