"""The gateway's priority gate: credited requests first, free ones a fair share."""

from __future__ import annotations

import asyncio

import pytest

from tracker_service.gateway.priority import CREDITED, FREE, PriorityGate


async def _saturated_order(gate: PriorityGate, credited: int, free: int) -> list[str]:
    """Fill every slot, queue `credited` and `free` waiters (free first, so arrival
    order alone would favour them), then free one slot at a time: the admission order."""
    for _ in range(gate.capacity):
        await gate.acquire(FREE)
    order: list[str] = []

    async def wait(klass: str) -> None:
        await gate.acquire(klass)
        order.append(klass)

    tasks = [asyncio.create_task(wait(FREE)) for _ in range(free)]
    tasks += [asyncio.create_task(wait(CREDITED)) for _ in range(credited)]
    await asyncio.sleep(0)
    for _ in range(credited + free):
        gate.release()
        await asyncio.sleep(0)
    await asyncio.gather(*tasks)
    return order


def test_credited_requests_go_first_and_free_ones_get_every_fourth_slot() -> None:
    gate = PriorityGate(2, free_share=4)
    order = asyncio.run(_saturated_order(gate, credited=12, free=6))
    # While both wait: 3 credited, then 1 free, repeated; free ones left over go last.
    assert order[:8] == [CREDITED] * 3 + [FREE] + [CREDITED] * 3 + [FREE]
    assert order.count(FREE) == 6 and order.count(CREDITED) == 12
    assert order[-3:] == [FREE] * 3  # the credited queue emptied first
    assert gate.busy == 2


def test_free_requests_never_starve_under_a_constant_stream_of_credited_ones() -> None:
    async def scenario() -> tuple[int, int]:
        gate = PriorityGate(1, free_share=3)
        await gate.acquire(CREDITED)
        done = {CREDITED: 0, FREE: 0}

        async def request(klass: str) -> None:
            await gate.acquire(klass)
            done[klass] += 1
            await asyncio.sleep(0)
            gate.release()

        free = [asyncio.create_task(request(FREE)) for _ in range(5)]
        credited = []
        for _ in range(60):  # credited requests keep arriving faster than slots free up
            credited += [asyncio.create_task(request(CREDITED)) for _ in range(2)]
            await asyncio.sleep(0)
        gate.release()
        await asyncio.gather(*free, *credited)
        return done[FREE], done[CREDITED]

    free_done, credited_done = asyncio.run(scenario())
    assert free_done == 5 and credited_done == 120


def test_a_cancelled_waiter_gives_up_its_place_and_an_off_gate_admits_everyone() -> None:
    async def scenario() -> list[str]:
        gate = PriorityGate(1)
        await gate.acquire(FREE)
        order: list[str] = []

        async def wait(klass: str) -> None:
            await gate.acquire(klass)
            order.append(klass)

        gone = asyncio.create_task(wait(CREDITED))
        stays = asyncio.create_task(wait(FREE))
        await asyncio.sleep(0)
        gone.cancel()
        await asyncio.sleep(0)
        gate.release()
        await stays
        assert gate.waiting(CREDITED) == 0 and gate.busy == 1
        off = PriorityGate(0)
        for _ in range(100):
            await off.acquire(FREE)
        return order

    assert asyncio.run(scenario()) == [FREE]


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError):
        PriorityGate(-1)
    with pytest.raises(ValueError):
        PriorityGate(1, free_share=0)
