"""The ``--exec 'HOST COMMAND'`` commands of ``dcnlab lab DIR`` (:mod:`dcnlab.emu.lab` reads the directory): each
checked before the lab comes up, then run in order in its host's namespace with DIR as the working directory;
a trailing ``&`` runs one in the background until the lab goes down."""

from __future__ import annotations

import codecs
import os
import re
import select
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

from dcnlab.emu.lab import Lab
from dcnlab.topos.errors import UserError

if TYPE_CHECKING:
    from dcnlab.emu.network import FabricNetwork


BACKGROUND_KEEP = 1 << 20
"""Bytes of a background command's output kept for printing at the end (the last ones)."""


_BACKGROUND = re.compile(r"(?<![&\\])&\s*$")


@dataclass(frozen=True)
class Exec:
    """One ``--exec 'HOST COMMAND'``."""

    host: str
    command: str
    background: bool
    given: str

    @property
    def label(self) -> str:
        return f"{self.host}{' (background)' if self.background else ''}: {self.command}"


def parse_exec(text: str) -> Exec:
    parts = text.strip().split(None, 1)
    if len(parts) < 2 or not parts[1].strip():
        raise UserError(f"argument --exec {text!r}: expected 'HOST COMMAND', e.g. 'h1 ping -c 1 10.0.2.2'")
    host, command = parts[0], parts[1].strip()
    background = bool(_BACKGROUND.search(command))
    if background:
        command = _BACKGROUND.sub("", command).rstrip()
        if not command:
            raise UserError(f"argument --exec {text!r}: no command before '&'")
    return Exec(host, command, background, text)


def check_execs(texts: list[str], lab: Lab) -> list[Exec]:
    """Every ``--exec`` parsed, its host checked against the topology (before anything is created)."""
    hosts = lab.hosts()
    out = []
    for text in texts:
        e = parse_exec(text)
        if e.host not in hosts:
            raise UserError(f"argument --exec {text!r}: no host {e.host!r} in {lab.rel(lab.topology)}; valid: "
                            f"{', '.join(hosts)}")
        out.append(e)
    return out


@dataclass
class _Running:
    e: Exec
    proc: subprocess.Popen
    output: bytearray = field(default_factory=bytearray)
    reader: threading.Thread | None = None
    stopped: bool = False


class ExecRunner:
    """Runs ``--exec`` commands in the hosts of a running network, in order; background ones until :meth:`stop`.

    A command runs as ``bash -c COMMAND`` in its host's namespaces (Mininet's ``popen``, which also puts it
    in a session and process group of its own) with the lab directory as working directory, the run's tag
    in its environment (``dcnlab clean`` finds it after a crash) and ``PYTHONUNBUFFERED=1`` (a Python
    script's output is not lost when it is stopped). A foreground command is over when its shell exits,
    even if something it started keeps the output open; whatever is left of any command's process group
    is ended by :meth:`stop`, before the lab goes down."""

    def __init__(self, net: FabricNetwork, cwd: Path, out: IO[str] | None = None) -> None:
        self.net, self.cwd = net, cwd
        self.out = out if out is not None else sys.stdout
        self.background: list[_Running] = []
        self.failed: list[tuple[Exec, int]] = []
        self._groups: list[subprocess.Popen] = []

    def _popen(self, e: Exec) -> subprocess.Popen:
        assert self.net.run is not None
        env = {**os.environ, **self.net.run.tag, "PYTHONUNBUFFERED": "1"}
        p = self.net.hosts[e.host].popen(["bash", "-c", e.command], stdin=subprocess.DEVNULL,
                                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=str(self.cwd),
                                         env=env)
        self._groups.append(p)
        self.net.run.record_process(f"exec:{len(self._groups)}:{e.host}", p.pid, "bash")
        return p

    def _say(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()

    def run(self, e: Exec) -> int | None:
        """Run one command: a foreground one to its end (its status), a background one started (None)."""
        self._say(f"== {e.label}\n")
        p = self._popen(e)
        assert p.stdout is not None
        if e.background:
            r = _Running(e, p)
            r.reader = threading.Thread(target=self._collect, args=(r,), name=f"exec-{e.host}", daemon=True)
            r.reader.start()
            self.background.append(r)
            return None
        dec = codecs.getincrementaldecoder("utf-8")("replace")
        fd, ends_line = p.stdout.fileno(), True
        try:
            while True:
                ready, _, _ = select.select([fd], [], [], 0.1)
                chunk = os.read(fd, 1 << 16) if ready else None
                if chunk == b"" or (chunk is None and p.poll() is not None):
                    break
                text = dec.decode(chunk or b"")
                if text:
                    self._say(text)
                    ends_line = text.endswith("\n")
            rc = p.wait()
        except BaseException:
            _end_group(p)
            raise
        finally:
            p.stdout.close()
        if not ends_line:
            self._say("\n")
        if rc != 0:
            self._say(f"== {e.host}: exit status {rc}: {e.command}\n")
            self.failed.append((e, rc))
        return rc

    @staticmethod
    def _collect(r: _Running) -> None:
        assert r.proc.stdout is not None
        fd = r.proc.stdout.fileno()
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                return
            if not chunk:
                return
            r.output += chunk
            if len(r.output) > 2 * BACKGROUND_KEEP:
                del r.output[:-BACKGROUND_KEEP]

    def stop(self) -> None:
        """End what is left of every command's process group (SIGTERM, then SIGKILL), then print what each
        background command wrote."""
        for r in self.background:
            r.stopped = r.proc.poll() is None
        for p in self._groups:
            _end_group(p)
        self._groups.clear()
        for r in self.background:
            if r.reader is not None:
                r.reader.join(timeout=5)
            how = "stopped at teardown" if r.stopped else f"exit status {r.proc.returncode}"
            text = bytes(r.output[-BACKGROUND_KEEP:]).decode("utf-8", "replace")
            if text and not text.endswith("\n"):
                text += "\n"
            self._say(f"== {r.e.label}: {how}; its output:\n{text}")
        self.background.clear()


def _end_group(p: subprocess.Popen, grace: float = 1.0) -> None:
    """End every process left in ``p``'s process group (``p`` leads it: Mininet's ``mnexec -d`` made it
    a session leader): SIGTERM, then SIGKILL to what is still there after ``grace`` seconds."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        deadline = time.monotonic() + grace
        try:
            os.killpg(p.pid, sig)
            while time.monotonic() < deadline:
                p.poll()                    # reap the leader, so that a zombie does not count
                os.killpg(p.pid, 0)         # ProcessLookupError: nobody left in the group
                time.sleep(0.02)
        except ProcessLookupError:
            break
        except PermissionError:
            break
    p.poll()
