"""Mininet hosts whose shells start all at once.

Mininet's ``Node.__init__`` starts the host's shell and waits for its prompt, then runs one
command, host after host. :class:`FastHost` only spawns the shell in ``__init__``;
:func:`finish_shells` then waits for every prompt and runs the set-up commands of all hosts
concurrently. Everything else is Mininet's ``Host``.
"""

from __future__ import annotations

import logging
import os
import pty
import select
from collections.abc import Sequence

from mininet.node import Host

# Importing Mininet makes every logger created afterwards a MininetLogger with a handler of its own
# (logging.setLoggerClass), so each dcnlab warning would print twice, once without a newline.
logging.setLoggerClass(logging.Logger)

PROMPT = chr(127)


class FastHost(Host):
    def startShell(self, mnopts: str | None = None) -> None:  # noqa: N802 (Mininet's name)
        """Mininet's ``Node.startShell`` up to, not including, the wait for the prompt."""
        if getattr(self, "shell", None):
            return
        opts = ("-cd" if mnopts is None else mnopts) + ("n" if self.inNamespace else "")
        cmd = ["mnexec", opts, "env", "PS1=" + PROMPT, "bash", "--norc", "--noediting", "-is",
               "mininet:" + self.name]
        self.master, self.slave = pty.openpty()
        self.shell = self._popen(cmd, stdin=self.slave, stdout=self.slave, stderr=self.slave, close_fds=False)
        self.stdin = os.fdopen(self.master, "r")
        self.stdout = self.stdin
        self.pid = self.shell.pid
        self.pollOut = select.poll()
        self.pollOut.register(self.stdout)
        self.outToNode[self.stdout.fileno()] = self
        self.inToNode[self.stdin.fileno()] = self
        self.execed = False
        self.lastCmd = None
        self.lastPid = None
        self.readbuf = ""
        self.waiting = True  # until finish_shells() has seen the prompt


def finish_shells(hosts: Sequence[FastHost]) -> None:
    """Wait for every host's first prompt, then set up every shell at once (as Mininet does)."""
    for h in hosts:
        while True:
            data = h.read(1024)
            if data and data[-1] == PROMPT:
                break
            h.pollOut.poll()
        h.waiting = False
    for h in hosts:
        h.sendCmd("unset HISTFILE; stty -echo; set +m")
    for h in hosts:
        h.waitOutput()
