"""One check before any command that emulates or compiles: root and the P4 toolchain.

Every command path that brings up BMv2 (``dcnlab run``, ``bench emu``, ``bench chaos``,
``reproduce … --emulate``) or runs p4c (``dcnlab compile``) calls :func:`require` first, before it
creates a namespace, starts a model sweep or writes into its ``--out`` directory. What is missing
is named in one line (``dcnlab: error: …``, exit status 2); nothing has been created or overwritten.

Tools are located as the emulation locates them (:mod:`dcnlab.controller.runtime.toolchain`): under
``$DCNLAB_P4_PREFIX/bin`` when that variable is set, else on ``PATH``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from dcnlab.experiments.errors import UserError

__all__ = ["COMPILE_TOOLS", "EMULATION_TOOLS", "Needs", "message", "problems", "require"]

#: What an emulation runs: BMv2 with P4Runtime, its Thrift CLI (registers, queues), and p4c.
EMULATION_TOOLS: tuple[str, ...] = ("simple_switch_grpc", "simple_switch_CLI", "p4c")
#: What ``dcnlab compile`` runs.
COMPILE_TOOLS: tuple[str, ...] = ("p4c",)


@dataclass(frozen=True)
class Needs:
    """What a command needs from the machine: these toolchain binaries, and root if ``root``."""

    tools: tuple[str, ...] = EMULATION_TOOLS
    root: bool = True

    def describe(self) -> str:
        """``root and the P4 toolchain``, ``the P4 toolchain`` or ``root``."""
        parts = (["root"] if self.root else []) + (["the P4 toolchain"] if self.tools else [])
        return " and ".join(parts) or "nothing"

    def problems(self) -> list[str]:
        """Why the command cannot run here, one item per kind of problem (empty: it can)."""
        from dcnlab.controller.runtime.toolchain import PREFIX_VAR, missing, prefix

        why: list[str] = []
        gone = missing(*self.tools)
        if gone:
            pre = prefix()
            where = (f"in ${PREFIX_VAR}/bin ({pre}/bin) or on PATH" if pre is not None
                     else f"on PATH (or set ${PREFIX_VAR} to their install prefix)")
            why.append(f"{', '.join(gone)} not found {where}; see README, 'The P4 toolchain'")
        if self.root and os.geteuid() != 0:
            why.append("not root (network namespaces, veths, BMv2 on raw interfaces; run it as root, e.g. with sudo)")
        return why


def problems(tools: Sequence[str] = EMULATION_TOOLS, root: bool = True) -> list[str]:
    """Why ``tools`` (and root, if ``root``) are not available here (empty: they are)."""
    return Needs(tuple(tools), root).problems()


def message(what: str, why: Sequence[str], needs: Needs | None = None) -> str:
    """The one-line refusal: ``WHAT needs root and the P4 toolchain: PROBLEM; PROBLEM``."""
    return f"{what} needs {(needs or Needs()).describe()}: {'; '.join(why)}"


def require(what: str, tools: Sequence[str] = EMULATION_TOOLS, root: bool = True) -> None:
    """Raise :class:`UserError` naming everything missing for ``what`` (e.g. ``dcnlab run``).

    Call it before any work: before a namespace, a run directory, a model sweep or an output file.
    """
    needs = Needs(tuple(tools), root)
    why = needs.problems()
    if why:
        raise UserError(message(what, why, needs))
