"""The machine's own network namespace after an emulation: nothing of ours left there.

Other work on the machine adds and removes interfaces in that namespace meanwhile: another test suite's veths
(``tests/sshd_machine.py`` makes ``dcm<token>``), another dcnlab run's host veths for the moment between their
creation and their move into the host's namespace. A check that compares the whole set fails whenever such work
overlaps the test (seen: ``dcm03c731`` during the BMv2 suite's ten runs). :func:`assert_none_left` looks only at
interfaces dcnlab names (``<node>-eth<i>``; of ``nodes`` when given), and gives one that is still there until
``guard`` seconds to go (a transient one goes in milliseconds; one of ours left behind stays)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable

from dcnlab.emu.counters import node_of



def root_interfaces() -> set[str]:
    return set(os.listdir("/sys/class/net"))


def _ours(names: Iterable[str], nodes: set[str] | None) -> set[str]:
    out = set()
    for n in names:
        node = node_of(n)
        if node is not None and (nodes is None or node in nodes):
            out.add(n)
    return out


def assert_none_left(before: set[str], nodes: Iterable[str] | None = None, guard: float = 60.0) -> None:
    """No dcnlab interface (of ``nodes``, or any) is in the machine's namespace that was not there ``before``."""
    wanted = set(nodes) if nodes is not None else None
    deadline = time.monotonic() + guard          # a hang guard: a transient interface goes in milliseconds
    while True:
        extra = _ours(root_interfaces() - before, wanted)
        if not extra or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert not extra, f"the machine's own namespace changed: {sorted(extra)} left there"
