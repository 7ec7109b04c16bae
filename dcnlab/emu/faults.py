"""Link faults in a running emulation.

A link is cut in one of two ways:

* ``drop`` (default): every frame sent on either end is dropped (``pfifo limit 0`` as the root
  qdisc, one ``tc -batch`` in the run's namespace). The interfaces stay up and BMv2 keeps running;
  a controller that wants to react must be told, as a switch's port-down notification would.
* ``down``: ``ip link set <intf> down`` on both ends. Measured with BMv2 1.15.5 and libpcap
  1.10.3: a switch stops receiving on *all* its ports while one of its interfaces is down, and
  stays frozen after the interface comes back up until a frame arrives on it (BMv2 reads every
  port from one loop, and libpcap keeps waiting on the downed interface). So ``down`` also freezes
  both end switches; it is offered because it is what a real port-down looks like to the kernel.

Restoring undoes either (the root qdisc is deleted; the interfaces are set up).
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from typing import Literal

from dcnlab.emu.netns import command
from dcnlab.topos.errors import UserError

CutMode = Literal["drop", "down"]
CUT_MODES: tuple[str, ...] = ("drop", "down")


class FaultError(UserError):
    pass


def _batch(tool: str, netns: str, lines: Sequence[str], ignore_missing: bool = False) -> None:
    if not lines:
        return
    argv = command(netns, tool, *(["-force"] if ignore_missing else []), "-batch", "-")
    r = subprocess.run(argv, input="".join(line + "\n" for line in lines), capture_output=True, text=True)
    if r.returncode != 0 and not ignore_missing:
        raise FaultError(f"{tool} in {netns} failed: {r.stderr.strip()[-400:]}")


def cut(netns: str, intfs: Sequence[str], how: CutMode = "drop") -> None:
    """Cut the links whose ends are ``intfs`` (give both ends of a link for both directions)."""
    if how == "drop":
        _batch("tc", netns, [f"qdisc replace dev {i} root pfifo limit 0" for i in intfs])
    elif how == "down":
        _batch("ip", netns, [f"link set dev {i} down" for i in intfs])
    else:
        raise FaultError(f"cut mode {how!r} is unknown; valid: {', '.join(CUT_MODES)}")


def restore(netns: str, intfs: Sequence[str]) -> None:
    """Undo :func:`cut` on ``intfs`` (either mode)."""
    _batch("tc", netns, [f"qdisc del dev {i} root" for i in intfs], ignore_missing=True)
    _batch("ip", netns, [f"link set dev {i} up" for i in intfs])
