"""A second "machine" on this one, for the cluster tests: a network namespace of its own, joined to
this machine's namespace by one veth with private addresses, running an ``sshd`` of its own.

The sshd is Debian's (openssh-server), started by the test with its own configuration, host key,
authorized key and pid file in a temporary directory, listening only on the veth address inside the
namespace, so nothing outside this machine can reach it; it is stopped by its pid. The machine's
own sshd (none by default: see ``setup``) is never touched. Only the network is separate: the
second machine shares this one's file system and processes, as a VM with the same dcnlab install
would have the same paths.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from dcnlab.emu.netns import command, exec_prefix

SSHD = "/usr/sbin/sshd"
PRIVSEP_DIR = Path("/run/sshd")


@dataclass
class SshdMachine:
    netns: str
    alias: str
    """The ``Host`` alias of :attr:`ssh_config` (``--servers localhost,<alias>``)."""
    address: str
    local_address: str
    ssh_config: Path
    pid: int
    dir: Path
    veth: str

    def ssh(self, *cmd: str, timeout: float = 60) -> subprocess.CompletedProcess:
        import shlex
        return subprocess.run(["ssh", "-F", str(self.ssh_config), "-o", "BatchMode=yes", "-T", self.alias,
                               shlex.join(cmd)], capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)


def missing() -> str | None:
    """Why this machine cannot host the second machine (None: it can)."""
    for tool in (SSHD, shutil.which("ssh"), shutil.which("ssh-keygen"), shutil.which("nsenter")):
        if tool is None or not os.path.exists(tool):
            return "needs openssh-server and openssh-client (./setup installs them)"
    return None


def _run(*argv: str) -> None:
    subprocess.run(argv, check=True, capture_output=True, text=True)


def start(tmp: Path) -> SshdMachine:
    token = secrets.token_hex(3)
    ns, veth = f"dcnlab-test-machine-{token}", f"dcm{token}"
    a, b = secrets.randbelow(250) + 1, secrets.randbelow(60) * 4
    local, remote = f"10.254.{a}.{b + 1}", f"10.254.{a}.{b + 2}"
    d = tmp / f"machine-{token}"
    d.mkdir(mode=0o700)
    made_privsep = not PRIVSEP_DIR.exists()
    _run("ip", "netns", "add", ns)
    try:
        _run("ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns)
        _run("ip", "addr", "add", f"{local}/30", "dev", veth)
        _run("ip", "link", "set", veth, "up")
        _run(*command(ns, "ip", "addr", "add", f"{remote}/30", "dev", "eth0"))
        _run(*command(ns, "ip", "link", "set", "eth0", "up"))
        _run(*command(ns, "ip", "link", "set", "lo", "up"))
        _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / "host_key"))
        _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / "id"))
        shutil.copy(d / "id.pub", d / "authorized_keys")
        (d / "sshd_config").write_text(f"""ListenAddress {remote}
Port 22
HostKey {d / 'host_key'}
AuthorizedKeysFile {d / 'authorized_keys'}
PidFile {d / 'sshd.pid'}
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
UseDNS no
AllowAgentForwarding no
X11Forwarding no
PermitTunnel no
# -L of a Unix socket needs both (OpenSSH checks AllowTcpForwarding for streamlocal too)
AllowTcpForwarding local
AllowStreamLocalForwarding local
""")
        alias = f"dcnlab-m2-{token}"
        (d / "known_hosts").write_text(f"{remote} {(d / 'host_key.pub').read_text()}")
        (d / "ssh_config").write_text(f"""Host {alias}
  HostName {remote}
  User root
  IdentityFile {d / 'id'}
  IdentitiesOnly yes
  UserKnownHostsFile {d / 'known_hosts'}
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
Host {alias}-closed
  HostName {remote}
  Port 2222
  User root
  IdentityFile {d / 'id'}
  IdentitiesOnly yes
  UserKnownHostsFile {d / 'known_hosts'}
  StrictHostKeyChecking yes
""")
        if made_privsep:
            PRIVSEP_DIR.mkdir(mode=0o755)
            (d / "made-privsep").touch()
        _run(*exec_prefix(ns), SSHD, "-f", str(d / "sshd_config"), "-E", str(d / "sshd.log"))
        deadline = time.monotonic() + 60      # a hang guard: sshd writes its pid file in milliseconds
        pid_file = d / "sshd.pid"      # sshd creates it, then writes the pid: wait for a whole line
        while not (pid_file.exists() and pid_file.read_text().endswith("\n")) and time.monotonic() < deadline:
            time.sleep(0.02)
        pid = int(pid_file.read_text())
        return SshdMachine(ns, alias, remote, local, d / "ssh_config", pid, d, veth)
    except BaseException:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        subprocess.run(["ip", "link", "del", veth], capture_output=True)
        raise


def stop(m: SshdMachine) -> None:
    """Stop the sshd's sessions (what runs in them sees its connection close), then the sshd, by pid;
    delete the namespace and the veth."""
    for pid in [*sshd_sessions(m), m.pid]:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + 30      # a hang guard: a SIGTERMed sshd exits in milliseconds
        while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
    subprocess.run(["ip", "netns", "del", m.netns], capture_output=True)
    subprocess.run(["ip", "link", "del", m.veth], capture_output=True)
    if (m.dir / "made-privsep").exists():
        try:
            PRIVSEP_DIR.rmdir()
        except OSError:
            pass


def sshd_sessions(m: SshdMachine) -> list[int]:
    """sshd processes serving sessions (children of the listener), by their parent pid."""
    out = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                stat = (p / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == m.pid:
                out.append(int(p.name))
    return out
