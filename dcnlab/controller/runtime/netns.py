"""Run a child process inside a named network namespace (``/run/netns/<name>``).

The controller reaches BMv2's Thrift server, which listens on every interface of the run's
namespace and nowhere else, by starting ``simple_switch_CLI`` inside that namespace.

Children are started through ``nsenter --net=<path> --`` (:func:`exec_prefix`), which enters the
namespace and execs the program, keeping its pid. Not through a Python ``preexec_fn``: that forces
a real ``fork()`` while gRPC's threads run, and gRPC's fork handlers then fail now and then
(``epoll_wait error: Bad file descriptor``); without it, Python starts children with ``vfork()``
and no fork handler runs. Unlike ``ip netns exec`` (and ``ip -n``, ``tc -n``), ``nsenter --net`` enters the
network namespace alone: no mount namespace of its own, no ``mount --make-rslave /`` (which fails where
``/`` is not a mount point: a chroot, a minimal container) and no /sys remount. So /sys/class/net in such
a child still shows the caller's namespace; read interfaces over netlink (``ip``) or /proc/net instead.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable
from pathlib import Path

NETNS_DIR = Path("/run/netns")
CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


def exec_prefix(name: str) -> list[str]:
    """argv prefix that runs the rest of the argv inside namespace ``name``."""
    return ["nsenter", f"--net={NETNS_DIR / name}", "--"]


def enter(name: str) -> Callable[[], None]:
    """A ``preexec_fn`` that moves the child into namespace ``name`` before it execs (for tests and
    tools without gRPC threads; see the module docstring)."""
    target = str(NETNS_DIR / name)

    def _enter() -> None:
        fd = os.open(target, os.O_RDONLY)
        try:
            if _libc.setns(fd, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), f"setns({target})")
        finally:
            os.close(fd)

    return _enter
