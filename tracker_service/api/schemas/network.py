"""What a network says about itself (GET /api/v1/network) and an invite's redemption."""

from __future__ import annotations

from pydantic import BaseModel, Field

CHALLENGE_PATTERN = r"^[0-9a-f]{32,128}$"


class NetworkModelPublic(BaseModel):
    artifact_id: str = Field(description="the model, e.g. HuggingFaceTB/SmolLM2-135M")
    ready: bool = Field(description="whether live computers answer questions with it now")
    computers: int = Field(description="live computers serving part of it")


class NetworkPublic(BaseModel):
    """Set by the operator (serve --network-name ...); signed by the tracker's key."""

    name: str
    description: str
    operator: str
    contact: str
    terms_url: str
    tracker_url: str = Field(description="the URL invites name (public_url, else as served)")
    private: bool = Field(description="whether joining needs an invite or a join token")
    models: list[NetworkModelPublic]
    tracker_public_key: str = Field(description="base64 of the tracker's raw Ed25519 key")
    key_fingerprint: str = Field(
        description="first 32 hex of SHA-256 of that key: what an invite link's `key` names"
    )
    challenge: str | None = Field(
        default=None, description="the `challenge` query parameter, echoed inside the signature"
    )
    signature: str = Field(
        description="base64 Ed25519 signature by the tracker key over "
        "'meshnet.network-info.v1\\n' + canonical JSON of this object without `signature`"
    )


class InviteRedeemCreate(BaseModel):
    public_key: str = Field(description="base64 of the raw 32-byte Ed25519 public key")
    code: str = Field(min_length=1, max_length=64, description="the invite code")


class InviteRedeemPublic(BaseModel):
    node_id: str
    join_token: str = Field(description="the credential registration needs on this tracker")
    again: bool = Field(description="this identity had redeemed the invite before")
    tracker_url: str
    key_fingerprint: str
    nonce: str = Field(description="the redeem request's nonce, bound into the signature")
    signature: str = Field(
        description="base64 Ed25519 signature by the tracker key over "
        "'meshnet.invite-redeemed.v1\\n' + canonical JSON of this object without `signature`"
    )
