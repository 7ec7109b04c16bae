"""One check before any command that emulates or compiles: root, the P4 toolchain, and a ``/`` Mininet can use.

Every command path that brings up BMv2 (``dcnlab run``, ``bench emu``, ``bench chaos``,
``reproduce … --emulate``) or runs p4c (``dcnlab compile``) calls :func:`require` first, before it
creates a namespace, starts a model sweep or writes into its ``--out`` directory. What is missing
is named in one line (``dcnlab: error: …``, exit status 2), and only what is missing (root is not
mentioned to root, nor a binary that is there); nothing has been created or overwritten.

An emulation's Mininet hosts each get a mount namespace of their own (``mnexec -n`` unshares it and runs
``mount --make-rprivate /``), which fails (``remount: Invalid argument``) where ``/`` is not a mount point:
in a plain ``debootstrap`` + ``chroot``, or a minimal container. That is found in ``/proc/self/mountinfo``
before any work (:func:`root_is_mount_point`), and the refusal says how to make ``/`` one.

Tools are located as the emulation locates them (:mod:`dcnlab.controller.runtime.toolchain`): under
``$DCNLAB_P4_PREFIX/bin`` when that variable is set, else on ``PATH``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from dcnlab.topos.errors import UserError

__all__ = ["COMPILE_TOOLS", "EMULATION_TOOLS", "NO_MOUNT_POINT", "Needs", "message", "mount_points", "problems",
           "require", "root_is_mount_point"]

#: What an emulation runs: BMv2 with P4Runtime, its Thrift CLI (registers, queues), and p4c.
EMULATION_TOOLS: tuple[str, ...] = ("simple_switch_grpc", "simple_switch_CLI", "p4c")
#: What ``dcnlab compile`` runs.
COMPILE_TOOLS: tuple[str, ...] = ("p4c",)

NOT_ROOT = "not root (network namespaces, veths, BMv2 on raw interfaces; run it as root, e.g. with sudo)"
"""The problem when root is needed and missing."""
NO_MOUNT_POINT = ("/ is not a mount point (a chroot?), and Mininet's hosts need a mount namespace of their own "
                  "(mnexec runs mount --make-rprivate /); make the chroot's directory a mount point before entering "
                  "it: mount --bind DIR DIR, then chroot DIR")
"""The problem when the emulation's hosts are needed and ``/`` is not a mount point."""
MOUNTINFO = "/proc/self/mountinfo"
_NOT_FOUND = re.compile(r"^(?P<names>.+?) (?P<rest>not found\b.*)$", re.S)
"""The problem when tools are missing: ``NAME, NAME not found ...``."""


def mount_points(mountinfo: str) -> list[str]:
    """The mount points of a ``/proc/PID/mountinfo`` text (its fifth field, octal escapes such as ``\\040``
    for a space undone), as this process sees them: relative to its root directory, and without the mounts
    outside it (a chroot's)."""
    out = []
    for line in mountinfo.splitlines():
        fields = line.split()
        if len(fields) > 4:
            out.append(re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), fields[4]))
    return out


def root_is_mount_point(mountinfo: str | None = None) -> bool:
    """Whether ``/`` is a mount point (``mountinfo``: the text of ``/proc/self/mountinfo``, read when None).
    Where that cannot be read (no ``/proc``), nothing is claimed: True."""
    if mountinfo is None:
        try:
            with open(MOUNTINFO) as f:
                mountinfo = f.read()
        except OSError:
            return True
    return "/" in mount_points(mountinfo)


@dataclass(frozen=True)
class Needs:
    """What a command needs from the machine: these toolchain binaries, root if ``root``, and a ``/`` that is a
    mount point if ``hosts`` (Mininet's hosts; None: whenever BMv2, ``simple_switch_grpc``, is among ``tools``)."""

    tools: tuple[str, ...] = EMULATION_TOOLS
    root: bool = True
    hosts: bool | None = None

    def problems(self) -> list[str]:
        """Why the command cannot run here, one item per kind of problem (empty: it can). Each item names
        only what is missing: the binaries not found (not the whole toolchain), ``not root`` only if not,
        :data:`NO_MOUNT_POINT` only where ``/`` is not a mount point and hosts are needed."""
        from dcnlab.controller.runtime.toolchain import PREFIX_VAR, missing, prefix

        why: list[str] = []
        gone = missing(*self.tools)
        if gone:
            pre = prefix()
            where = (f"in ${PREFIX_VAR}/bin ({pre}/bin) or on PATH" if pre is not None
                     else f"on PATH (or set ${PREFIX_VAR} to their install prefix)")
            why.append(f"{', '.join(gone)} not found {where}; see README, 'The P4 toolchain'")
        if self.root and os.geteuid() != 0:
            why.append(NOT_ROOT)
        hosts = "simple_switch_grpc" in self.tools if self.hosts is None else self.hosts
        if hosts and not root_is_mount_point():
            why.append(NO_MOUNT_POINT)
        return why


def problems(tools: Sequence[str] = EMULATION_TOOLS, root: bool = True, hosts: bool | None = None) -> list[str]:
    """Why ``tools`` (and root, if ``root``; a ``/`` for Mininet's hosts, as :class:`Needs` says) are not
    available here (empty: they are)."""
    return Needs(tuple(tools), root, hosts).problems()


def message(what: str, why: Sequence[str]) -> str:
    """The one-line refusal, naming only what is missing (``why``: :func:`problems`' items):

    * ``WHAT needs p4c: not found on PATH (...)``, when only binaries are missing;
    * ``WHAT needs root: not root (...)``, when only root is;
    * ``WHAT needs root and p4c: not root (...); p4c not found on PATH (...)``, when both are.
    """
    root = [p for p in why if p.startswith("not root")]
    tools = [m for m in (_NOT_FOUND.match(p) for p in why if not p.startswith("not root")) if m]
    needed = (["root"] if root else []) + [m["names"] for m in tools]
    if not needed:
        return f"{what} cannot run here: {'; '.join(why)}"
    if len(why) == 1 and tools:         # the names are in the head already
        return f"{what} needs {needed[0]}: {tools[0]['rest']}"
    return f"{what} needs {' and '.join(needed)}: {'; '.join([*root, *(p for p in why if p not in root)])}"


def require(what: str, tools: Sequence[str] = EMULATION_TOOLS, root: bool = True, hosts: bool | None = None) -> None:
    """Raise :class:`UserError` naming everything missing for ``what`` (e.g. ``dcnlab run``), and only that.

    Call it before any work: before a namespace, a run directory, a model sweep or an output file.
    """
    why = Needs(tuple(tools), root, hosts).problems()
    if why:
        raise UserError(message(what, why))
