"""Processes started in Mininet hosts work in a chroot made as dcnlab's preflight advises.

``dcnlab run`` and every ``--emulate`` command refuse where ``/`` is not a mount point and say to
``mount --bind DIR DIR`` before ``chroot DIR``. Done so, the switches came up and every host agent failed
(``AgentError: agent on h0 exited (status 1)``; its log: ``/root/dcnlab: No such file or directory``):
Mininet's ``mnexec -a PID`` enters the host shell's mount namespace, whose root is the machine's, not the
chroot's, and then cannot ``chdir`` back to a path that exists only in the chroot. dcnlab now enters a host
with ``nsenter --root`` (the host shell's root, the chroot) and the working directory by its path
(:func:`dcnlab.emu.hosts.enter_prefix`).

The chroot here: in a mount namespace of its own (nothing mounted is seen outside, and it ends with the test),
a fresh directory bind-mounted onto itself, this machine's top-level directories bound in (as
:mod:`fake_chroot` binds them), and the checkout also bound at a path that exists only inside,
``/dcnlab-in-chroot``, where the commands run (as a user's checkout, ``/root/dcnlab``, existed only inside their chroot).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from dcnlab.emu.preflight import root_is_mount_point

PROJECT = Path(__file__).resolve().parent.parent
INSIDE = "/dcnlab-in-chroot"
NEEDS = ("unshare", "chroot", "mount", "mnexec", "nsenter")

pytestmark = [pytest.mark.netns,
              pytest.mark.skipif(os.geteuid() != 0, reason="needs root"),
              pytest.mark.skipif(any(shutil.which(t) is None for t in NEEDS),
                                 reason=f"needs {', '.join(t for t in NEEDS if shutil.which(t) is None)}"),
              # these tests make a chroot of their own with unshare --mount --propagation private, which a machine
              # whose / is no mount point (already a chroot, as tests/test_netns_chroot.py runs the suite) refuses
              pytest.mark.skipif(not root_is_mount_point(), reason="/ is not a mount point (already in a chroot): "
                                 "cannot make a mount namespace for a chroot of its own")]

_SCRIPT = r"""
set -eu
R=$1; outer=$2; project=$3; inside=$4; shift 4
[ "$(readlink /proc/self/ns/mnt)" != "$outer" ] || { echo "not in a mount namespace of its own" >&2; exit 97; }
mount --bind "$R" "$R"          # what dcnlab's preflight advises: the chroot's directory is a mount point
top=/$(echo "$R" | cut -d/ -f2)
for src in "$top" /*; do
    name=${src#/}
    case $name in run|lost+found) continue ;; esac
    if [ -L "$src" ]; then
        [ -L "$R/$name" ] || cp -P "$src" "$R/$name"
    elif [ -d "$src" ] && [ ! -d "$R/$name" ]; then
        mkdir "$R/$name" && mount --rbind "$src" "$R/$name"
    fi
done
mkdir -p "$R/run" "$R$inside"
mount --bind "$project" "$R$inside"
exec chroot "$R" "$@"
"""


def in_chroot(root: Path, argv: Sequence[str], timeout: float) -> subprocess.CompletedProcess:
    """``argv`` in the chroot (module docstring) in directory :data:`INSIDE`, with ``PWD`` set as a shell's ``cd``
    sets it (``mnexec -a`` goes back to ``$PWD`` when that names the directory: the checkout's own path, bound
    in too, would be found outside); output captured. Past ``timeout`` (a hang guard) its process group is
    killed and :class:`subprocess.TimeoutExpired` raised."""
    root.mkdir()
    outer = os.readlink("/proc/self/ns/mnt")
    cmd = ["unshare", "--mount", "--propagation", "private", "sh", "-c", _SCRIPT, "sh", str(root.resolve()), outer,
           str(PROJECT), INSIDE, "env", f"--chdir={INSIDE}", f"PWD={INSIDE}", f"PYTHONPATH={INSIDE}", *argv]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True) as p:
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            raise
    return subprocess.CompletedProcess(cmd, p.returncode, out, err)


HOST_SHELL = f"""
import json, os, subprocess, sys, time
from dcnlab.emu.hosts import enter_prefix

# A Mininet host's shell: mnexec -cn gives it a network and a mount namespace of its own, and keeps its root.
shell = subprocess.Popen(["mnexec", "-cn", "sleep", "600"])
try:
    mine = os.readlink("/proc/self/ns/net")
    for _ in range(1000):
        if os.readlink(f"/proc/{{shell.pid}}/ns/net") != mine:
            break
        time.sleep(0.01)
    probe = ["sh", "-c", "pwd; readlink /proc/self/ns/net; test -f {INSIDE}/pyproject.toml && echo inside"]
    mn = subprocess.run(["mnexec", "-a", str(shell.pid), *probe], capture_output=True, text=True, timeout=60)
    ours = subprocess.run([*enter_prefix(shell.pid), *probe], capture_output=True, text=True, timeout=60)
    # a topology's host commands enter the host the same way (FabricNetwork._run_host_commands)
    import tempfile
    from pathlib import Path
    from dcnlab.emu.hostcmds import HostCommands
    with tempfile.TemporaryDirectory() as logs:
        cmds = HostCommands(Path(logs))
        try:
            cmds.run({{"h0": (enter_prefix(shell.pid), [probe[2]])}})
        finally:
            cmds.stop()
        logged = (Path(logs) / "commands-h0.log").read_text()
    print(json.dumps({{"shell_ns": os.readlink(f"/proc/{{shell.pid}}/ns/net"), "mine": mine,
                      "mnexec": [mn.returncode, mn.stdout, mn.stderr],
                      "ours": [ours.returncode, ours.stdout, ours.stderr], "commands": logged}}))
finally:
    shell.kill()
    shell.wait()
"""


def test_a_host_is_entered_keeping_the_chroots_root(tmp_path):
    """In the chroot, ``mnexec -a PID`` (Mininet's way) fails at the working directory (every agent failed so); dcnlab's
    prefix runs the program (and a topology's host command) in the host's network namespace, in the same
    directory, inside the chroot."""
    r = in_chroot(tmp_path / "root", [sys.executable, "-c", HOST_SHELL], timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["shell_ns"] != got["mine"]
    rc, _, err = got["mnexec"]
    assert rc != 0 and f"{INSIDE}: No such file or directory" in err, got["mnexec"]     # what failed every agent
    rc, out, err = got["ours"]
    assert rc == 0, err
    assert out.split() == [INSIDE, got["shell_ns"], "inside"], out
    assert got["commands"].split()[-3:] == [INSIDE, got["shell_ns"], "inside"], got["commands"]


def test_enter_prefix_keeps_the_callers_directory(tmp_path):
    """Outside a chroot: the same directory (``cwd`` or this process's), the host's network namespace."""
    from dcnlab.emu.hosts import enter_prefix

    assert enter_prefix(42, "rel")[-1] == f"--chdir={Path('rel').absolute()}"
    assert enter_prefix(42)[-1] == f"--chdir={os.getcwd()}"
    holder = subprocess.Popen(["unshare", "--net", "sleep", "600"])
    try:
        for _ in range(1000):
            if os.readlink(f"/proc/{holder.pid}/ns/net") != os.readlink("/proc/self/ns/net"):
                break
            subprocess.run(["sleep", "0.01"], check=True)
        r = subprocess.run([*enter_prefix(holder.pid, tmp_path), "sh", "-c", "pwd; readlink /proc/self/ns/net"],
                           capture_output=True, text=True, timeout=60, check=False)
        assert r.returncode == 0, r.stderr
        assert r.stdout.split() == [str(tmp_path), os.readlink(f"/proc/{holder.pid}/ns/net")]
    finally:
        holder.kill()
        holder.wait()


AGENTS = """
import json, os, subprocess, time
import dcnlab

with dcnlab.Network("bcube:n=2,k=0", agents=True) as net:
    a, b = sorted(net.hosts)[:2]
    emu = net.emu
    rx, tx = emu.agents[b], emu.agents[a]
    rx.call({"cmd": "recv_start", "port": 5001, "bin": 0.1})
    sent = tx.call(tx.send_request(emu.addrs[b], 20))
    for _ in range(100):
        got = rx.call({"cmd": "recv_peek", "port": 5001})
        if sum(f["packets"] for f in got["flows"].values()) >= 20:
            break
        time.sleep(0.1)
    got = sum(f["packets"] for f in rx.call({"cmd": "recv_stop", "port": 5001})["flows"].values())
    p = net.hosts[a].popen(["sh", "-c", "pwd; readlink /proc/self/ns/net"], stdout=subprocess.PIPE, text=True)
    out = p.communicate(timeout=60)[0]
    shell = f"/proc/{net.hosts[a].pid}/ns/net"
    print(json.dumps({"sent": sent, "got": got, "popen": out.split(), "host_ns": os.readlink(shell)}))
"""


@pytest.mark.bmv2
@pytest.mark.timeout(900)
@pytest.mark.skipif(shutil.which("simple_switch_grpc") is None, reason="needs BMv2 (simple_switch_grpc)")
def test_bmv2_agents_and_host_processes_work_in_the_chroot(tmp_path):
    """A BMv2 fabric with host agents in the chroot: the agents start (they failed with 'agent on h0 exited
    (status 1)'), carry traffic through the switches, and a host's ``popen`` runs in the chroot's directory."""
    r = in_chroot(tmp_path / "root", ["env", f"DCNLAB_RUN_ROOT={tmp_path / 'runs'}", sys.executable, "-c", AGENTS],
                  timeout=800)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "Traceback" not in r.stderr, r.stderr[-3000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["sent"]["sent"] == 20
    assert got["got"] == 20, got
    assert got["popen"] == [INSIDE, got["host_ns"]], got
