"""Keep BMv2's Thrift ports unreachable from outside the machine.

BMv2's Thrift server has no bind option and listens on every interface. We insert, for each
run, iptables (and ip6tables) rules that drop TCP to the run's Thrift ports unless the packet
arrives on ``lo``. The rules carry the comment ``dcnlab:<run id>``. Teardown and ``dcnlab clean``
delete exactly those rules.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
from collections.abc import Callable

from topos.errors import UserError

log = logging.getLogger(__name__)

TOOLS = ("iptables", "ip6tables")


class GuardError(UserError):
    pass


def rule(ports: list[int], tag: str) -> list[str]:
    """Rule spec (after -I/-D CHAIN) dropping non-loopback TCP to ``ports``."""
    lo, hi = min(ports), max(ports)
    return ["INPUT", "-p", "tcp", "--dport", f"{lo}:{hi}", "!", "-i", "lo",
            "-m", "comment", "--comment", f"dcnlab:{tag}", "-j", "DROP"]


def install(ports: list[int], tag: str, record: Callable[[list[str]], None] = lambda r: None) -> list[list[str]]:
    """Install the rules; return [tool, *spec] records for removal. Raise if iptables is missing.

    ``record`` is called with each rule *before* it is inserted, so an interruption between the
    insert and our return still leaves the rule in the run's record for teardown and ``clean``."""
    done: list[list[str]] = []
    spec = rule(ports, tag)
    for tool in TOOLS:
        exe = shutil.which(tool)
        if exe is None:
            if tool == "iptables":
                raise GuardError("iptables not found: cannot keep BMv2 Thrift ports private "
                                 "(install iptables, or pass --no-thrift-guard to accept the exposure)")
            continue
        chain, *rest = spec
        record([tool, *spec])
        proc = subprocess.run([exe, "-w", "-I", chain, *rest], capture_output=True, text=True)
        if proc.returncode != 0:
            if tool == "iptables":
                remove(done)
                raise GuardError(f"iptables refused the Thrift guard rule: {proc.stderr.strip()} "
                                 f"(or pass --no-thrift-guard)")
            log.info("%s unavailable (%s); IPv6 guard skipped", tool, proc.stderr.strip())
            continue
        done.append([tool, *spec])
    return done


def remove(records: list[list[str]]) -> None:
    for tool, chain, *rest in records:
        exe = shutil.which(tool)
        if exe is None:
            continue
        proc = subprocess.run([exe, "-w", "-D", chain, *rest], capture_output=True, text=True)
        if proc.returncode != 0 and "does a matching rule exist" not in proc.stderr \
                and "Bad rule" not in proc.stderr:
            log.warning("could not remove %s rule %s: %s", tool, " ".join(rest), proc.stderr.strip())
