"""Operator actions; each needs the admin bearer token."""

from __future__ import annotations

from pydantic import BaseModel, Field


class AdminReasonCreate(BaseModel):
    reason: str = Field(min_length=1, max_length=500)


class RecipeRevokeCreate(AdminReasonCreate):
    model_artifact_digest: str = Field(pattern=r"^[0-9a-f]{64}$")
    runtime_recipe_digest: str = Field(pattern=r"^[0-9a-f]{64}$")


class AdminActionPublic(BaseModel):
    action: str
    target: str
    done: bool
