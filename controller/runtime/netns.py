"""Run a child process inside a named network namespace (``/run/netns/<name>``).

The controller reaches BMv2's Thrift server, which listens on every interface of the run's
namespace and nowhere else, by starting ``simple_switch_CLI`` inside that namespace.
``setns(2)`` between fork and exec costs nothing, unlike ``ip netns exec``.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable
from pathlib import Path

NETNS_DIR = Path("/run/netns")
CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


def enter(name: str) -> Callable[[], None]:
    """A ``preexec_fn`` that moves the child into namespace ``name`` before it execs."""
    target = str(NETNS_DIR / name)

    def _enter() -> None:
        fd = os.open(target, os.O_RDONLY)
        try:
            if _libc.setns(fd, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), f"setns({target})")
        finally:
            os.close(fd)

    return _enter
