"""Mininet hosts whose shells start all at once, and whose processes keep the caller's root directory.

Mininet's ``Node.__init__`` starts the host's shell and waits for its prompt, then runs one
command, host after host. :class:`FastHost` only spawns the shell in ``__init__``;
:func:`finish_shells` then waits for every prompt and runs the set-up commands of all hosts
concurrently.

A process started in a host (``popen``: the traffic agents, ``lab --exec``, the API's ``Host.popen``; and
the topology's host ``commands``) enters the host's network and mount namespaces with :func:`enter_prefix`
instead of Mininet's ``mnexec -a PID``. ``mnexec -a`` enters the mount namespace with ``setns``, which
resets the root directory to that namespace's root, then goes back to the caller's working directory by
its path. In a chroot (a directory bind-mounted onto itself, ``mount --bind DIR DIR; chroot DIR``, as
:mod:`dcnlab.emu.preflight` advises) that root is the machine's, not the chroot's, and the path is not
there: every agent failed with ``/root/dcnlab: No such file or directory``. ``nsenter --root`` takes the
host shell's own root (the chroot's, which ``mnexec -n`` kept), and ``env --chdir`` the caller's working
directory by its path, inside that root. Everything else is Mininet's ``Host``.
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


def enter_prefix(pid: int, cwd: str | os.PathLike | None = None) -> list[str]:
    """The command prefix that runs a program in the network and mount namespaces of process ``pid`` (a
    host's shell) with that process's root directory and ``cwd`` (default: this process's) as working
    directory (module docstring); the program is not put in a session of its own (``start_new_session``)."""
    if cwd is None:
        try:
            cwd = os.getcwd()
        except OSError:                     # a working directory removed under us: the host's root
            cwd = "/"
    return ["nsenter", f"--target={pid}", "--net", "--mount", "--root", "--", "env",
            f"--chdir={os.path.abspath(os.fspath(cwd))}"]


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

    def popen(self, *args, **kwargs):
        """Mininet's ``popen`` (``mnexec -da PID``: a session of its own, the host's namespaces), entering the
        host with :func:`enter_prefix` (module docstring). A remote host (Mininet's cluster edition) or a
        given ``mncmd`` keeps Mininet's way."""
        if getattr(self, "isRemote", False) or "mncmd" in kwargs:
            return super().popen(*args, **kwargs)
        kwargs.setdefault("start_new_session", True)        # mnexec -d
        return super().popen(*args, mncmd=enter_prefix(self.pid, kwargs.get("cwd")), **kwargs)


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
