"""A hop that claims in its receipt to have run to its shard's end when its ticket
stopped it earlier (``effective_end``): on a certify route of two whole-model nodes it
would pass a forward over layers it was never asked for as its own. It signs
consistently; only the range differs from what the ticket asked.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from core.dataplane import hop
from core.dataplane.receipts import HopReceipt


def install() -> None:
    honest = hop.sign_receipt

    def claim_the_shard(receipt: HopReceipt, sign: Any) -> dict[str, Any]:
        return honest(replace(receipt, end=receipt.end + 1), sign)

    def signed_receipt(self: hop.HopSession) -> dict[str, Any]:
        grant = self._grant
        if grant is not None and grant.hop.stop < grant.hop.end:
            hop.sign_receipt = claim_the_shard
            try:
                return original(self)
            finally:
                hop.sign_receipt = honest
        return original(self)

    original = hop.HopSession._signed_receipt
    hop.HopSession._signed_receipt = signed_receipt  # type: ignore[method-assign]
