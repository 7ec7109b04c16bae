"""Named network namespaces: one per run, holding every BMv2 process and switch-side interface.

A run's namespace is created with ``ip netns add`` (so it appears under ``/run/netns`` and
``dcnlab clean`` can find it from the run record). Processes enter it with ``setns(2)`` between
fork and exec (:func:`enter`), which costs nothing, unlike ``ip netns exec`` with its /sys
remount. Deleting the namespace after its processes are gone destroys every interface in it
at once, and with them their veth peers in the host namespaces.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from pathlib import Path

from dcnlab.controller.runtime.netns import NETNS_DIR, enter, exec_prefix
from dcnlab.topos.errors import UserError

__all__ = ["NetnsError", "command", "create", "delete", "enter", "exec_prefix", "exists", "path", "pids", "sysctl",
           "system_tool"]

log = logging.getLogger(__name__)


class NetnsError(UserError):
    pass


def path(name: str) -> Path:
    return NETNS_DIR / name


def exists(name: str) -> bool:
    return path(name).exists()


def _ip(*args: str, input: str | None = None, netns: str | None = None) -> subprocess.CompletedProcess:
    """``ip args``, inside namespace ``netns`` if given (:func:`command`)."""
    argv = command(netns, "ip", *args) if netns else ["ip", *args]
    return subprocess.run(argv, input=input, capture_output=True, text=True)


def create(name: str) -> None:
    """Create namespace ``name`` with loopback up, IPv6 off for every interface made in it later,
    and no reverse-path or redirect chatter.

    All or nothing: when a step after ``ip netns add`` fails (or is interrupted), the namespace is
    deleted again and the step's error is raised.
    """
    r = _ip("netns", "add", name)
    if r.returncode != 0:
        raise NetnsError(f"cannot create network namespace {name}: {r.stderr.strip()}")
    try:
        r = _ip("link", "set", "lo", "up", netns=name)
        if r.returncode != 0:
            raise NetnsError(f"cannot bring up loopback in {name}: {r.stderr.strip()}")
        sysctl(name, {"net.ipv6.conf.all.disable_ipv6": "1", "net.ipv6.conf.default.disable_ipv6": "1"})
    except BaseException:
        _undo_create(name)
        raise


def _undo_create(name: str) -> None:
    """Delete the half-made namespace ``name``; a failure is logged (the caller re-raises the first error)."""
    try:
        delete(name)
    except NetnsError as e:
        log.error("could not delete the half-created network namespace %s: %s", name, e)


def sysctl(name: str, values: dict[str, str]) -> None:
    """Set sysctls inside namespace ``name`` (a network namespace has its own net.* values)."""
    r = subprocess.run(command(name, "sysctl", "-q", "-w", *(f"{k}={v}" for k, v in values.items())),
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise NetnsError(f"cannot set {', '.join(values)} in network namespace {name}: {r.stderr.strip()}")


def command(name: str, tool: str, *args: str) -> list[str]:
    """argv that runs the system tool ``tool`` (``ip``, ``tc``, ``sysctl``) with ``args`` in namespace ``name``.

    Entered with :func:`exec_prefix` (``nsenter --net``), never ``ip -n``, ``tc -n`` or ``ip netns exec``:
    those also make a mount namespace and run ``mount --make-rslave /`` first, which fails where ``/`` is
    not a mount point (a chroot, a minimal container), and these tools need the network namespace alone."""
    return [*exec_prefix(name), system_tool(tool), *args]


def system_tool(name: str) -> str:
    """A system administration tool (``sysctl``, ``tc``, ``ip``): on PATH, else in /usr/sbin or /sbin (a
    PATH without the sbin directories is common under ``su``, sudo, cron or ``env PATH=/usr/bin:/bin``)."""
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin") or name


def inode(name: str) -> int | None:
    try:
        return path(name).stat().st_ino
    except OSError:
        return None


def pids(name: str) -> list[int]:
    """Processes whose network namespace is ``name`` (what ``ip netns pids`` reports)."""
    ino = inode(name)
    if ino is None:
        return []
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            if os.stat(d / "ns" / "net").st_ino == ino:
                out.append(int(d.name))
        except OSError:
            continue
    return out


def delete(name: str) -> None:
    """Delete namespace ``name`` (absent is fine). Its interfaces go when its last process has gone."""
    if not exists(name):
        return
    r = _ip("netns", "del", name)
    if r.returncode != 0 and exists(name):
        raise NetnsError(f"cannot delete network namespace {name}: {r.stderr.strip()}")
