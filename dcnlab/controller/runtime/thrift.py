"""The Thrift side channel to BMv2 (through ``simple_switch_CLI``), for what P4Runtime lacks.

BMv2's P4Runtime server cannot read or write registers (PI returns UNIMPLEMENTED), and
queue rate and depth are Thrift-only. This channel covers both. Each call runs one CLI
process with a batch of commands. The CLI prints errors and still exits 0, so we parse
its output per command and raise :class:`ThriftError`.
"""

from __future__ import annotations

import logging
import re
import subprocess
import sys
from collections.abc import Callable, Sequence

from dcnlab.controller.runtime.errors import ThriftError
from dcnlab.controller.runtime.netns import exec_prefix
from dcnlab.controller.runtime.toolchain import require_tool, tool_env

log = logging.getLogger(__name__)

PROMPT = "RuntimeCmd: "
_ERROR_PREFIXES = ("Error", "Invalid", "*** Unknown syntax", "Exception", "Traceback")

Runner = Callable[[list[str], str, "str | None"], str]
"""(argv, stdin text, network namespace or None) -> stdout text."""


def run_cli(argv: list[str], stdin: str, netns: str | None = None) -> str:
    """Run the CLI (inside ``netns`` if given); a failing process raises ``CalledProcessError``
    (the channel adds the switch name)."""
    argv = exec_prefix(netns) + argv if netns else argv
    return subprocess.run(argv, input=stdin, capture_output=True, text=True, env=tool_env(), timeout=60,
                          check=True).stdout


class ThriftChannel:
    """Thrift commands to one switch. ``netns``: the network namespace the switch's Thrift server
    listens in (dcnlab's emulator keeps it there, out of reach of everything else)."""

    def __init__(self, switch: str, thrift_port: int, runner: Runner | None = None,
                 netns: str | None = None) -> None:
        self.switch, self.port, self.netns = switch, thrift_port, netns
        self._runner = runner or run_cli

    def _argv(self) -> list[str]:
        cli = require_tool("simple_switch_CLI")
        # Run the CLI with our interpreter: it needs the `thrift` module, which our venv has.
        return [sys.executable, str(cli), "--thrift-port", str(self.port)]

    def run(self, commands: Sequence[str]) -> list[str]:
        """Run ``commands``; return each command's output. Raise on the first failed command."""
        try:
            out = self._runner(self._argv(), "\n".join(commands) + "\n", self.netns)
        except subprocess.CalledProcessError as e:
            raise ThriftError(self.switch, "; ".join(commands),
                              (e.stderr or "").strip()[-500:] or f"simple_switch_CLI exited {e.returncode}") from None
        parts = out.split(PROMPT)[1:]  # before the first prompt: the CLI banner
        results = [p.strip() for p in parts[:len(commands)]]
        if len(results) < len(commands):
            raise ThriftError(self.switch, commands[len(results)], f"no output from simple_switch_CLI: {out[-300:]!r}")
        for cmd, res in zip(commands, results):
            for line in res.splitlines():
                if line.startswith(_ERROR_PREFIXES):
                    raise ThriftError(self.switch, cmd, line)
        return results

    # -- registers ---------------------------------------------------------------
    def register_read(self, name: str, index: int | None = None) -> int | list[int]:
        if index is None:
            (res,) = self.run([f"register_read {name}"])
            m = re.search(r"=\s*(.*)$", res, re.S)
            if not m:
                raise ThriftError(self.switch, f"register_read {name}", f"unexpected output {res!r}")
            body = m.group(1).strip()
            return [int(v) for v in body.split(",")] if body else []
        (res,) = self.run([f"register_read {name} {index}"])
        m = re.search(r"\]=\s*(-?\d+)", res)
        if not m:
            raise ThriftError(self.switch, f"register_read {name} {index}", f"unexpected output {res!r}")
        return int(m.group(1))

    def register_write(self, name: str, index: int, value: int) -> None:
        self.run([f"register_write {name} {index} {value}"])

    def register_reset(self, name: str) -> None:
        self.run([f"register_reset {name}"])

    # -- queues ------------------------------------------------------------------
    def set_queue_rate(self, pps: int, port: int | None = None) -> None:
        """Egress queue rate in packets per second (all ports when ``port`` is None)."""
        if pps <= 0:
            raise ValueError(f"queue rate must be > 0 packets/s, got {pps}")
        self.run([f"set_queue_rate {pps}" + ("" if port is None else f" {port}")])

    def set_queue_depth(self, packets: int, port: int | None = None) -> None:
        """Egress queue depth in packets (all ports when ``port`` is None)."""
        if packets <= 0:
            raise ValueError(f"queue depth must be > 0 packets, got {packets}")
        self.run([f"set_queue_depth {packets}" + ("" if port is None else f" {port}")])

    def set_queues(self, depth: int | None, rate: int | None, ports: Sequence[int]) -> None:
        """Depth and/or rate on several ports in one CLI run."""
        cmds = []
        for p in ports:
            if depth is not None:
                cmds.append(f"set_queue_depth {depth} {p}")
            if rate is not None:
                cmds.append(f"set_queue_rate {rate} {p}")
        if cmds:
            self.run(cmds)
