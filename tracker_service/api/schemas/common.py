"""Shapes shared by several resources."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ErrorPublic(BaseModel):
    """Every refusal: a stable machine-readable reason and a sentence to act on."""

    reason: str = Field(examples=["stale-timestamp"])
    detail: str = Field(examples=["the request is timestamped -412s from the tracker's clock"])


class FingerprintPublic(BaseModel):
    model_artifact_digest: str
    runtime_recipe_digest: str


class RecipeStatusPublic(BaseModel):
    status: str = Field(description="unknown, dark or certified")
    detail: str
    certified_at: float | None = None
