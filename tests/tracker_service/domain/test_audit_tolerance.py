"""The audit's tolerance follows the recipe's axes, as the node's doctor does."""

from __future__ import annotations

from tracker_service.domain.audit_compare import RELATIVE_TOLERANCE, tolerance_for


def test_a_recipe_with_bfloat16_products_is_audited_as_bfloat16_even_in_float32() -> None:
    assert tolerance_for("float32") == RELATIVE_TOLERANCE["float32"]
    assert tolerance_for("float32", "int8-per-channel") == RELATIVE_TOLERANCE["float32"]
    assert tolerance_for("float32", "int4-g32-int8-head") == RELATIVE_TOLERANCE["bfloat16"]
