"""Waiting for an event in a test without asserting how long it took.

A test that sleeps a fixed time and then checks that something happened fails on a busy machine; one
that asserts an elapsed time fails there too. These helpers wait for the event itself and fail only
after a hang guard: :data:`GUARD` seconds, far more than what they wait for takes on an idle machine
(a packet through a few BMv2 switches, a stream message: milliseconds), so only a hang reaches it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

GUARD = 60.0
"""Seconds before a wait is declared hung (what is waited for takes well under a second when idle)."""


def wait_until(cond: Callable[[], T], what: str, guard: float = GUARD, poll: float = 0.02) -> T:
    """``cond()``'s first true value; AssertionError naming ``what`` if it is still false after ``guard`` s."""
    deadline = time.monotonic() + guard
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: still not the case after the {guard:g}-s hang guard")
        time.sleep(poll)


def wait_received(agent: Any, port: int, flow: int | str, packets: int, guard: float = GUARD) -> bool:
    """Wait until ``agent``'s receiver on ``port`` counted ``packets`` packets (duplicates included) of
    ``flow``; False if the hang guard passed first (the test's own assertions then say what is missing)."""
    deadline = time.monotonic() + guard
    while True:
        f = agent.call({"cmd": "recv_peek", "port": port}).get("flows", {}).get(str(flow))
        if f is not None and f["packets"] >= packets:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)


def received(agent: Any, port: int, flow: int | str, packets: int, guard: float = GUARD) -> dict[str, Any]:
    """:func:`wait_received`, then stop the receiver and return ``flow``'s statistics (its final report)."""
    wait_received(agent, port, flow, packets, guard)
    final = agent.call({"cmd": "recv_stop", "port": port})
    return final.get("flows", {}).get(str(flow), {"packets": 0, "unique": 0, "bytes": 0, "lost": None})
