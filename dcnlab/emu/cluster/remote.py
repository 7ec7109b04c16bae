"""Reaching the other machines: SSH ControlMasters, Unix-socket forwarding, remote Mininet hosts.

**Servers.** ``--servers localhost,m2,root@10.0.0.3``: the first is this machine (``localhost`` or
one of its names or addresses); each other one is an SSH destination, as ``ssh`` takes it (a host,
``user@host`` or a ``Host`` alias of the SSH configuration, ``--ssh-config`` or root's own). dcnlab
logs in as root there (namespaces, veths and BMv2 need it, and so does reaching the root-only run
directory's sockets), with keys only: ``BatchMode=yes``, a host key that must already be known, no
agent or X11 forwarding.

**Connections.** Each machine gets SSH ControlMasters (``ControlMaster=yes``, ``ControlPersist=no``)
whose control sockets are in this run's 0700 socket directory; every other SSH command to that
machine (the machine's agent, the host shells, port forwards) rides on one of them, so it costs
a channel, not a login. Every such ssh runs in that directory and names its control socket
relative to it (:meth:`SshMaster.control_argv`): ssh binds the socket as ``NAME.<16 random characters>``
first, and a Unix socket's path is at most 107 bytes, which a directory of 86 bytes or more would
exceed as an absolute path. An sshd allows ``MaxSessions`` (default 10) sessions per connection, and
each remote host shell is one, so a machine gets one master per :data:`SESSIONS_PER_MASTER`
sessions.

**P4Runtime.** A remote switch's P4Runtime server listens on a Unix socket in that machine's run
directory (root's alone). The master forwards a local Unix socket in this run's socket directory
(``ssh -O forward -L local.sock:remote.sock``; ``StreamLocalBindMask=0177``) to it, so the
controller connects to ``unix:...`` as it does for a local switch, and nothing listens on a
network address on either side.

**Hosts.** Remote hosts are Mininet hosts made remote through Mininet's own ``RemoteMixin`` (the
cluster edition's ``RemoteHost``), with dcnlab's :class:`~dcnlab.emu.hosts.FastHost` start-up (all
shells spawned before any prompt is awaited). :class:`RemoteFastHost` replaces the mix-in's SSH
command line (``sudo -u USER ssh -o ForwardAgent=yes ...``, one login per node) by the machine's
master, and tags each shell with the machine's run id so that ``dcnlab clean`` there finds it.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dcnlab.topos.errors import UserError
from dcnlab.traffic.hostctl import stop_child

log = logging.getLogger(__name__)

__all__ = ["SESSIONS_PER_MASTER", "Server", "SshMaster", "SshPool", "agent_command", "parse_servers", "remote_python",
           "ssh_base"]

SESSIONS_PER_MASTER = 8
"""Sessions (host shells, the agent) per SSH connection: below sshd's default ``MaxSessions`` of 10."""
RESERVED_SESSIONS = 2
"""Sessions of a machine's first master kept for its agent and for short commands (``popen``)."""
MAX_SERVERS = 64
PYTHON_VAR = "DCNLAB_REMOTE_PYTHON"
"""The Python that runs dcnlab on the other machines (default: this one's ``sys.executable``)."""
_DEST = re.compile(r"^(?:[A-Za-z0-9._][A-Za-z0-9._-]{0,31}@)?[A-Za-z0-9_\[][A-Za-z0-9._:%\]-]{0,252}$")
LOCAL_NAMES = ("localhost", "127.0.0.1", "::1")
SSH_OPTIONS: tuple[str, ...] = (
    "-o", "BatchMode=yes",              # never a password or host-key prompt
    "-o", "ForwardAgent=no", "-o", "ForwardX11=no", "-o", "PermitLocalCommand=no",
    "-o", "ServerAliveInterval=10", "-o", "ServerAliveCountMax=3", "-o", "ConnectTimeout=10",
    "-o", "ExitOnForwardFailure=yes",
    "-o", "StreamLocalBindMask=0177",   # forwarded sockets: root's alone (in a 0700 directory anyway)
    "-o", "StreamLocalBindUnlink=yes",
    "-o", "LogLevel=ERROR",
)


def remote_python() -> str:
    return os.environ.get(PYTHON_VAR) or sys.executable


def agent_command(what: Sequence[str], run_root: str, run_id: str | None = None) -> list[str]:
    """The remote command line of ``python -I -m dcnlab.emu.cluster.agent WHAT...`` with the run root and, for
    ``serve``, the run's tag. ``-I``: ``-m`` would put the working directory (root's home) first on
    ``sys.path``, where a dcnlab checkout would shadow the installed dcnlab."""
    tag = [f"DCNLAB_RUN={run_id}"] if run_id else []
    return ["env", *tag, f"DCNLAB_RUN_ROOT={run_root}", remote_python(), "-I", "-m", "dcnlab.emu.cluster.agent", *what]


@dataclass(frozen=True)
class Server:
    """One machine of ``--servers``."""

    name: str
    """As given (an SSH destination; ``localhost`` or a name of this machine for the first)."""
    index: int

    @property
    def local(self) -> bool:
        return self.index == 0


def _local_addresses() -> set[str]:
    out = set(LOCAL_NAMES) | {socket.gethostname(), socket.getfqdn()}
    try:
        r = subprocess.run(["ip", "-o", "addr", "show"], capture_output=True, text=True, timeout=10)
        out |= {line.split()[3].split("/")[0] for line in r.stdout.splitlines() if len(line.split()) > 3}
    except (OSError, subprocess.SubprocessError):
        pass
    return out


def _host_part(dest: str) -> str:
    return dest.rpartition("@")[2].strip("[]")


def parse_servers(text: str) -> list[Server]:
    """``--servers``: comma-separated, the first this machine, the others distinct SSH destinations."""
    names = [s.strip() for s in text.split(",")]
    if not text.strip() or any(not n for n in names):
        raise UserError(f"argument --servers: {text!r} has an empty entry; valid: comma-separated machines, the "
                        f"first this one, e.g. localhost,node2,root@10.0.0.3")
    if len(names) > MAX_SERVERS:
        raise UserError(f"argument --servers: {len(names)} machines; valid: 1 to {MAX_SERVERS}")
    for n in names:
        if not _DEST.match(n) or n.startswith("-"):
            raise UserError(f"argument --servers: {n!r} is not an SSH destination; valid: host, user@host, an IP "
                            f"address or a Host alias of the SSH configuration")
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise UserError(f"argument --servers: {dup!r} is given twice; valid: each machine once")
    local = _local_addresses()
    if _host_part(names[0]) not in local:
        raise UserError(f"argument --servers: the first machine, {names[0]!r}, is not this machine; valid: "
                        f"localhost (or a name or address of this machine) first, then the others")
    for n in names[1:]:
        h = _host_part(n)
        if h in LOCAL_NAMES or _is_loopback(h):
            raise UserError(f"argument --servers: {n!r} is this machine again; valid: the other machines after "
                            f"the first")
    return [Server(n, i) for i, n in enumerate(names)]


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def ssh_base(config: Path | None) -> list[str]:
    """``ssh`` with dcnlab's options (and ``-F config``)."""
    ssh = shutil.which("ssh")
    if ssh is None:
        raise UserError("dcnlab run --servers needs the OpenSSH client (ssh) on this machine; install openssh-client")
    return [ssh, *(["-F", str(config)] if config is not None else []), *SSH_OPTIONS]


def _tail(path: Path, n: int = 300) -> str:
    """The last distinct lines of a log, on one line."""
    try:
        lines = [x.strip() for x in path.read_text(errors="replace").splitlines() if x.strip()]
    except OSError:
        return ""
    return "; ".join(dict.fromkeys(lines[-4:]))[-n:]


class SshMaster:
    """One SSH connection to a machine that other SSH commands share (``ControlMaster``)."""

    def __init__(self, dest: str, control: Path, config: Path | None, log_file: Path,
                 env: dict[str, str] | None = None) -> None:
        self.dest, self.control, self.log_file = dest, control.absolute(), log_file
        self.config = config.absolute() if config is not None else None      # ssh runs elsewhere (control_argv)
        self.env = {**os.environ, **(env or {})}
        self.proc: subprocess.Popen | None = None
        self.sessions = 0
        self.forwards: list[tuple[str, str]] = []

    def control_argv(self) -> list[str]:
        """The start of every ssh command line over this master: ``env --chdir=DIR ssh ... -o ControlPath=NAME``,
        ``DIR/NAME`` being :attr:`control`. The socket ssh binds, ``NAME.<16 characters>``, is then short
        whatever the length of ``DIR``; as an absolute path it would exceed a Unix socket's 107 bytes once
        ``DIR`` reached 86 (``unix_listener: path ... too long for Unix domain socket``). Every path ssh is
        given besides (``-F``, the forwarded sockets) is absolute."""
        return ["env", f"--chdir={self.control.parent}", *ssh_base(self.config),
                "-o", f"ControlPath={self.control.name}"]

    def start(self) -> None:
        with self.log_file.open("ab") as out:
            self.proc = subprocess.Popen([*self.control_argv(), "-o", "ControlMaster=yes", "-o", "ControlPersist=no",
                                          "-N", "-T", self.dest],
                                         stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                         env=self.env, start_new_session=True)

    def check(self) -> bool:
        return subprocess.run([*self.control_argv(), "-O", "check", self.dest], capture_output=True,
                              env=self.env).returncode == 0

    def wait(self, timeout: float = 20.0) -> None:
        """Until the master accepts sessions; a master that exits raises :class:`UserError` with ssh's words."""
        assert self.proc is not None
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise UserError(f"server {self.dest}: ssh failed (exit status {self.proc.returncode}): "
                                f"{_tail(self.log_file) or 'no message'}; dcnlab needs root login with a key "
                                f"(BatchMode) and a known host key")
            if self.control.exists() and self.check():
                return
            if time.monotonic() > deadline:
                raise UserError(f"server {self.dest}: no SSH connection after {timeout:.0f} s")
            time.sleep(0.05)

    def argv(self, cmd: Sequence[str], tty: bool = False) -> list[str]:
        """ssh argv that runs ``cmd`` (quoted for the remote shell) over this master."""
        return [*self.control_argv(), "-o", "ControlMaster=no", "-q", "-tt" if tty else "-T", self.dest,
                shlex.join(cmd)]

    def run(self, cmd: Sequence[str], timeout: float = 60.0, input: str | None = None
            ) -> subprocess.CompletedProcess:
        return subprocess.run(self.argv(cmd), input=input, capture_output=True, text=True, timeout=timeout,
                              env=self.env, stdin=None if input is not None else subprocess.DEVNULL)

    def forward(self, pairs: Sequence[tuple[str, str]]) -> None:
        """Forward local Unix sockets to remote ones: ``[(local path, remote path), ...]``."""
        if not pairs:
            return
        argv = [*self.control_argv(), "-O", "forward"]
        for local, remote in pairs:
            argv += ["-L", f"{os.path.abspath(local)}:{remote}"]        # the master's directory is not ours
        r = subprocess.run([*argv, self.dest], capture_output=True, text=True, env=self.env, timeout=60)
        if r.returncode != 0:
            raise UserError(f"server {self.dest}: forwarding {len(pairs)} P4Runtime socket(s) failed: "
                            f"{r.stderr.strip()[-300:]}; the server's sshd must allow AllowStreamLocalForwarding "
                            f"(and AllowTcpForwarding) for local forwards")
        self.forwards += list(pairs)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        """Close the master (and with it every forward and session on it)."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            subprocess.run([*self.control_argv(), "-O", "exit", self.dest], capture_output=True, env=self.env,
                           timeout=20)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                stop_child(self.proc)
        self.control.unlink(missing_ok=True)


class SshPool:
    """A machine's masters: a session goes to the first master with a free slot."""

    def __init__(self, dest: str, control_dir: Path, index: int, config: Path | None, log_dir: Path,
                 env: dict[str, str]) -> None:
        self.dest, self.dir, self.index, self.config, self.log_dir, self.env = (dest, control_dir, index, config,
                                                                               log_dir, env)
        self.masters: list[SshMaster] = []

    def _new(self) -> SshMaster:
        k = len(self.masters)
        m = SshMaster(self.dest, self.dir / f"m{self.index}.{k}", self.config,
                      self.log_dir / f"ssh-m{self.index}.log", self.env)
        self.masters.append(m)
        return m

    def open(self, sessions: int, timeout: float = 20.0) -> None:
        """Enough masters for ``sessions`` host shells (and the reserved sessions), connected concurrently."""
        want = max(1, -(-(sessions + RESERVED_SESSIONS) // SESSIONS_PER_MASTER))
        new = [self._new() for _ in range(want - len(self.masters))]
        if new and not self.masters[:-len(new)]:
            new[0].sessions = RESERVED_SESSIONS
        for m in new:
            m.start()
        for m in new:
            m.wait(timeout)

    @property
    def first(self) -> SshMaster:
        return self.masters[0]

    def session(self) -> SshMaster:
        """A master with a free session slot (counted)."""
        for m in self.masters:
            if m.sessions < SESSIONS_PER_MASTER:
                m.sessions += 1
                return m
        m = self._new()
        m.start()
        m.wait()
        m.sessions += 1
        return m

    def stop(self) -> None:
        for m in self.masters:
            m.stop()


def remote_host_class():
    """:class:`RemoteFastHost`, built on first use (Mininet's modules load in about half a second)."""
    global _REMOTE_HOST
    if _REMOTE_HOST is None:
        _REMOTE_HOST = _make_remote_host()
    return _REMOTE_HOST


_REMOTE_HOST = None


def _sbin_on_path() -> None:
    """Mininet checks for ``ifconfig`` and ``mnexec`` on PATH before its first host; as root they are in the
    sbin directories, which a PATH such as ``env PATH=/usr/bin:/bin`` (or su, cron) lacks: append them."""
    parts = os.environ.get("PATH", "").split(":")
    extra = [d for d in ("/usr/sbin", "/sbin") if d not in parts]
    if extra:
        os.environ["PATH"] = ":".join([p for p in parts if p] + extra)


def _make_remote_host():
    from mininet.examples.cluster import RemoteMixin
    from mininet.node import Node

    from dcnlab.emu.hosts import FastHost

    _sbin_on_path()

    class RemoteFastHost(RemoteMixin, FastHost):
        """A Mininet host on another machine: Mininet's ``RemoteMixin`` over dcnlab's ``FastHost``.

        Its shell is ``mnexec -cn bash`` there, reached through the machine's SSH master with a
        terminal (``-tt``), so the usual Mininet ``cmd``/``sendCmd`` work unchanged; ``popen`` runs
        ``mnexec -da PID`` there without a terminal. ``pid`` is the shell's pid on its machine
        (set by :func:`finish_remote_shells`)."""

        def __init__(self, name: str, pool: SshPool, tag: dict[str, str], **params) -> None:
            self.pool, self.tag = pool, tag
            super().__init__(name, server=pool.dest, user="root", serverIP=_host_part(pool.dest), **params)

        def startShell(self, mnopts: str | None = None) -> None:  # noqa: N802 (Mininet's name)
            """FastHost's spawn (no wait for the prompt), on the remote machine; RemoteMixin's
            ``echo $$`` comes later, for all hosts at once."""
            FastHost.startShell(self, "-c")

        def _popen(self, cmd, sudo: bool = True, tt: bool = True, **params):   # noqa: ARG002 (root already)
            if isinstance(cmd, str):
                cmd = cmd.split()
            master = self.pool.session() if tt and self.shell is None else self.pool.first
            argv = master.argv(["env", *(f"{k}={v}" for k, v in self.tag.items()), *cmd], tty=tt)
            params.update(preexec_fn=os.setpgrp)    # RemoteMixin's _ignoreSignal: Ctrl-C is for dcnlab
            return Node._popen(self, argv, **params)

    return RemoteFastHost


def finish_remote_shells(hosts: Sequence, timeout: float = 60.0) -> None:
    """Wait for every remote host's first prompt (a shell that exits or stays silent is an error naming
    the host, not a hang), set every shell up as :func:`~dcnlab.emu.hosts.finish_shells` does, and read
    each shell's pid on its machine (``echo $$``)."""
    from dcnlab.emu.hosts import PROMPT

    deadline = time.monotonic() + timeout
    for h in hosts:
        seen = ""
        while True:
            if h.pollOut.poll(200):
                try:
                    data = h.read(1024)
                except OSError:
                    data = ""
                seen = (seen + data)[-300:]
                if data and data[-1] == PROMPT:
                    break
            if h.shell.poll() is not None or time.monotonic() > deadline:
                why = "exited" if h.shell.poll() is not None else f"gave no prompt in {timeout:.0f} s"
                raise UserError(f"remote host {h.name} on {h.server}: its shell {why}: "
                                f"{seen.strip() or 'no output'} (is Mininet's mnexec installed there?)")
        h.waiting = False
    for h in hosts:
        h.sendCmd("unset HISTFILE; stty -echo; set +m")
    for h in hosts:
        h.waitOutput()
    for h in hosts:
        h.sendCmd("echo $$")
    for h in hosts:
        out = h.waitOutput()
        m = re.search(r"(\d+)\s*$", out)
        if m is None:
            raise UserError(f"remote host {h.name} on {h.server}: no shell pid in {out.strip()[-200:]!r}")
        h.pid = int(m.group(1))


def placer_class():
    """A Mininet ``Placer`` (for ``MininetCluster(placement=...)``) that places with
    :func:`dcnlab.emu.cluster.partition.partition_graph`: switches balanced, few cut links, hosts
    with the switch they attach to."""
    import networkx as nx
    from mininet.examples.cluster import Placer

    from dcnlab.emu.cluster.partition import partition_graph

    class PartitionPlacer(Placer):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            g = nx.Graph()
            g.add_nodes_from(self.switches)
            hosts = set(self.hosts)
            attach: dict[str, str] = {}
            for a, b in self.links:
                if a in g and b in g:
                    g.add_edge(a, b, weight=g.get_edge_data(a, b, {"weight": 0})["weight"] + 1)
                elif a in hosts and b in g:
                    attach[a] = b
                elif b in hosts and a in g:
                    attach[b] = a
            groups = partition_graph(g, len(self.servers))
            self.placement = {n: self.servers[i] for i, grp in enumerate(groups) for n in grp}
            for h in self.hosts:
                self.placement[h] = self.placement[attach[h]] if h in attach else self.servers[0]
            for i, c in enumerate(self.controllers):
                self.placement[c] = self.servers[i % len(self.servers)]

        def place(self, node: str) -> str:
            return self.placement[node]

    return PartitionPlacer
