"""One fabric over two "machines" on one host: this machine and a network namespace with an sshd of
its own (tests/sshd_machine.py), reachable only over a veth between them.

Without BMv2: SSH reaches the second machine as root with a key (BatchMode), a Unix socket there is
forwarded to one here, a VXLAN tunnel between a namespace on each machine carries a ping, a remote
Mininet host (RemoteMixin) runs commands there, a missing server or dcnlab there is refused in one
line, and nothing is left on either side afterwards. With BMv2: fat-tree k=4 over the two comes up,
routes, passes the all-pairs check, and after teardown and ``dcnlab clean`` nothing of it is left
on either side (namespaces, processes, tunnels, sockets, run directories in use).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import fake_chroot
import sshd_machine
from dcnlab.emu import netns
from dcnlab.emu.cleanup import leftovers
from dcnlab.emu.cluster import records, tunnels
from dcnlab.emu.cluster.agent import AgentClient, RemoteSide
from dcnlab.emu.cluster.partition import from_groups
from dcnlab.emu.cluster.remote import (SshPool, agent_command, finish_remote_shells, parse_servers, remote_host_class,
                                       remote_python)
from dcnlab.emu.cluster.side import Side
from dcnlab.emu.rundir import RunDir, all_runs
from dcnlab.topos.errors import UserError

pytestmark = [pytest.mark.netns, pytest.mark.timeout(600)]


@pytest.fixture
def machine(tmp_path):
    why = sshd_machine.missing()
    if why:
        pytest.skip(why)
    m = sshd_machine.start(tmp_path)
    try:
        yield m
    finally:
        sshd_machine.stop(m)


@pytest.fixture
def run_root(tmp_path, monkeypatch):
    root = tmp_path / "runs"
    monkeypatch.setenv("DCNLAB_RUN_ROOT", str(root))
    yield root
    from dcnlab.emu.cleanup import CleanReport, clean_run
    for run in all_runs(root):      # a test that failed half-way: its runs cleaned on both machines
        if not run.state.finished:
            _quietly(lambda run=run: clean_run(run, CleanReport()))
        run.remove_sockets()        # a long tmp path puts sockets under /run/dcnlab: gone with the test


def _netns_inode(pid: int | str = "self") -> int:
    return os.stat(f"/proc/{pid}/ns/net").st_ino


def _quietly(*steps) -> None:
    """Run every clean-up step even when one fails (the test's own assertion is what it reports)."""
    for step in steps:
        try:
            step()
        except Exception:  # noqa: BLE001
            pass


def _sessions_after(m, wait: float = 60.0) -> list[int]:
    """The second machine's sshd sessions still there after ``wait`` seconds (a session whose client
    just left takes a moment to exit; ``wait`` is a hang guard: it ends as soon as they are gone)."""
    deadline = time.monotonic() + wait
    while sshd_machine.sshd_sessions(m) and time.monotonic() < deadline:
        time.sleep(0.05)
    return sshd_machine.sshd_sessions(m)


def _pool(m, run: RunDir, sessions: int = 0) -> SshPool:
    pool = SshPool(m.alias, run.sockets, 1, m.ssh_config, run.path, run.tag)
    pool.open(sessions)
    return pool


def test_ssh_reaches_the_second_machine_as_root(machine, run_root):
    run = RunDir.create("ssh-test")
    pool = _pool(machine, run)
    try:
        r = pool.first.run(["sh", "-c", "id -u; readlink /proc/self/ns/net; echo $SSH_CONNECTION"])
        assert r.returncode == 0, r.stderr
        uid, ns, conn = r.stdout.split("\n")[:3]
        assert uid == "0"
        assert ns != os.readlink("/proc/self/ns/net")      # another network namespace: the other machine
        assert conn.split()[0] == machine.local_address and conn.split()[2] == machine.address
        assert [p.name for p in run.sockets.glob("m1.*")] == ["m1.0"]     # the control socket, in the 0700 dir
        assert (run.sockets.stat().st_mode & 0o777) == 0o700
    finally:
        pool.stop()
    assert not list(run.sockets.glob("m1.*"))
    assert not _sessions_after(machine)


def test_unix_socket_forwarding_reaches_a_server_there(machine, run_root, tmp_path):
    run = RunDir.create("fwd-test")
    remote_dir = tmp_path / "remote-run"
    remote_dir.mkdir(mode=0o700)
    remote_sock = remote_dir / "toy.sock"
    pool = _pool(machine, run)
    toy = """
import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1); print("ready", flush=True)
c, _ = s.accept(); c.sendall(b"hello " + c.recv(16)); c.close()
"""
    server = subprocess.Popen(pool.first.argv([sys.executable, "-c", toy, str(remote_sock)]), stdout=subprocess.PIPE,
                              text=True)
    try:
        assert server.stdout is not None and server.stdout.readline().strip() == "ready"
        local = run.sockets / "sw7.sock"
        pool.first.forward([(str(local), str(remote_sock))])
        assert local.is_socket() and (local.stat().st_mode & 0o777) == 0o600
        with socket.socket(socket.AF_UNIX) as c:
            c.settimeout(60)
            c.connect(str(local))
            c.sendall(b"from here")
            assert c.recv(64) == b"hello from here"
        assert server.wait(timeout=60) == 0
    finally:
        _quietly(server.kill, server.wait, pool.stop, run.remove_sockets)
    assert not list(run.sockets.glob("*.sock")) and not _sessions_after(machine)


def test_vxlan_tunnel_between_the_machines_carries_a_ping(machine, run_root):
    """A run namespace on each machine (this one's Side in-process, the other's in its agent), one
    tunnel end in each, an address on each: ping across; then both parts torn down."""
    run = RunDir.create("tunnel-test")
    pool = _pool(machine, run)
    rid = f"{run.id}-m1"
    client = AgentClient(machine.alias, pool.first.argv(agent_command(["serve"], str(run_root), rid)),
                         run.path / "agent-m1.log", run.tag)
    here, there = Side(run, f"dcnlab-{run.id}", owns_run=False), RemoteSide(client)
    try:
        hello = client.call("hello")
        assert hello["problems"] == [] or all("not found" in p for p in hello["problems"])
        here.setup()
        info = there.setup(rid, "tunnel-test")
        vni = tunnels.vni(run.id, 1)
        here.links([], [tunnels.TunnelEnd("s0-eth1", vni, machine.address)], [], [])
        there.links([], [tunnels.TunnelEnd("s1-eth1", vni, machine.local_address)], [], [])
        far = info["netns"]
        subprocess.run(netns.command(here.netns, "ip", "addr", "add", "192.168.99.1/24", "dev", "s0-eth1"), check=True)
        add = pool.first.run(netns.command(far, "ip", "addr", "add", "192.168.99.2/24", "dev", "s1-eth1"))
        assert add.returncode == 0, add.stderr
        r = pool.first.run(netns.command(far, "ip", "-d", "link", "show", "s1-eth1"))
        assert r.returncode == 0 and f"vxlan id {vni}" in r.stdout and "mtu 1500" in r.stdout, r.stderr
        ping = subprocess.run(netns.exec_prefix(here.netns) + ["ping", "-c", "3", "-i", "0.2", "-W", "2",
                                                               "192.168.99.2"], capture_output=True, text=True)
        assert ping.returncode == 0, ping.stdout + ping.stderr
        big = subprocess.run(netns.exec_prefix(here.netns) + ["ping", "-c", "1", "-W", "2", "-s", "1472",
                                                              "192.168.99.2"], capture_output=True, text=True)
        assert big.returncode == 0, big.stdout    # 1500-byte frames cross (outer IP fragments)
        assert not subprocess.run(["ip", "link", "show", "s0-eth1"], capture_output=True).returncode == 0
    finally:
        _quietly(there.stop, client.close, here.stop, pool.stop, run.remove_sockets)
    assert not netns.exists(f"dcnlab-{run.id}") and not netns.exists(f"dcnlab-{rid}")
    assert RunDir.load(run_root / rid).state.finished
    assert [x for x in leftovers(run_root) if not x.endswith("not marked finished")] == []
    assert not _sessions_after(machine)


def test_clean_finishes_a_crashed_run_on_both_machines(machine, run_root):
    """A run whose coordinator is gone mid-run (simulated: nothing of it is stopped, its owner pid is
    dead): its agent and run namespace live on the second machine, its SSH clients and namespace here.
    `dcnlab clean` stops all of it on both machines and marks the run finished."""
    from dcnlab.emu.cleanup import clean

    run = RunDir.create("crash-test")
    rid = f"{run.id}-m1"
    rec = records.ClusterRecord([machine.alias], {machine.alias: rid}, str(machine.ssh_config), remote_python(),
                                str(run_root), str(records.control_dir(run)))
    records.save(run, rec)
    pool = _pool(machine, run)
    client = AgentClient(machine.alias, pool.first.argv(agent_command(["serve"], str(run_root), rid)),
                         run.path / "agent-m1.log", run.tag)
    try:
        here = Side(run, f"dcnlab-{run.id}", owns_run=False)
        here.setup()
        agent_pid = client.call("hello")["pid"]
        RemoteSide(client).setup(rid, "crash-test")
        assert netns.exists(f"dcnlab-{rid}") and os.path.exists(f"/proc/{agent_pid}")
        run.state.owner_pid = 2**22 + 1         # no such process: the coordinator "died"
        run.save()
        assert any("not marked finished" in x for x in leftovers(run_root))
        report = clean()
        assert report.remote_failed == [] and run.id in report.runs, report
        for m in pool.masters:
            assert m.proc is not None and m.proc.wait(timeout=60) is not None     # its ssh processes were stopped
        client.proc.wait(timeout=60)
    finally:
        _quietly(lambda: clean(force=True), client.close, pool.stop)
    assert leftovers(run_root) == []
    assert not netns.exists(f"dcnlab-{run.id}") and not netns.exists(f"dcnlab-{rid}")
    deadline = time.monotonic() + 60      # a hang guard: processes exit in milliseconds
    while os.path.exists(f"/proc/{agent_pid}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{agent_pid}")
    assert records.remote_leftovers(RunDir.load(run.path)) == []
    assert not _sessions_after(machine)


@pytest.mark.skipif(not fake_chroot.root_is_mount_point(), reason=fake_chroot.NO_MOUNT_NAMESPACE)
def test_remote_mininet_host_runs_there(machine, run_root):
    """A Mininet host on the second machine through RemoteMixin: its own namespace there, commands
    and popen work, its pid is the shell's on that machine; terminate() leaves nothing."""
    from mininet.net import Mininet

    run = RunDir.create("host-test")
    pool = _pool(machine, run, sessions=2)
    Mininet.inited = True
    mn = Mininet(topo=None, build=False, controller=None, autoSetMacs=False, autoStaticArp=False, waitConnected=False)
    cls = remote_host_class()
    hosts = [mn.addHost(f"rh{i}", cls=cls, ip=None, pool=pool, tag={"DCNLAB_RUN": f"{run.id}-m1"}) for i in range(2)]
    try:
        finish_remote_shells(hosts)
        ssh_ns = {_netns_inode(p) for p in sshd_machine.sshd_sessions(machine)}
        for h in hosts:
            assert h.isRemote and h.server == machine.alias
            assert _netns_inode(h.pid) not in ssh_ns | {_netns_inode()}     # a namespace of its own there
            assert h.cmd("echo $((6*7))").strip() == "42"
            assert f"DCNLAB_RUN={run.id}-m1".encode() in Path(f"/proc/{h.pid}/environ").read_bytes()
        out, err, rc = hosts[0].pexec("ip", "-o", "link")
        assert rc == 0 and "lo" in out, err
        assert len({m.control for m in pool.masters}) == len(pool.masters) >= 1
    finally:
        _quietly(*(h.terminate for h in hosts), pool.stop)
    deadline = time.monotonic() + 60      # a hang guard: processes exit in milliseconds
    while any(os.path.exists(f"/proc/{h.pid}") for h in hosts) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(os.path.exists(f"/proc/{h.pid}") for h in hosts)
    assert not _sessions_after(machine)


def test_servers_are_refused_in_one_line(machine, run_root, monkeypatch):
    """Before anything is built: a server that does not answer, and one without dcnlab."""
    from dcnlab.emu.cluster.network import ClusterNetwork
    from dcnlab.emu.options import NetOptions
    from dcnlab.topos.spec import parse_spec

    f = parse_spec("fattree:k=4")
    opts = NetOptions(agents=False)
    servers = parse_servers(f"localhost,{machine.alias}-closed")      # nothing listens on its port
    # every switch on the other machine: this one needs no BMv2 for the test
    there = from_groups(f, [s.name for s in servers], [[], [n.name for n in f.forwarding_nodes()]])
    net = ClusterNetwork(f, servers, opts, ssh_config=machine.ssh_config, placement=there)
    with pytest.raises(UserError, match=f"server {machine.alias}-closed: ssh failed .*Connection refused") as e:
        net.connect()
    assert "\n" not in str(e.value)
    net.stop()
    monkeypatch.setenv("DCNLAB_REMOTE_PYTHON", "/nonexistent/python3")
    servers = parse_servers(f"localhost,{machine.alias}")
    there = from_groups(f, [s.name for s in servers], [[], [n.name for n in f.forwarding_nodes()]])
    net = ClusterNetwork(f, servers, opts, ssh_config=machine.ssh_config, placement=there)
    with pytest.raises(UserError, match=f"server {machine.alias}: .*nonexistent") as e:
        net.connect()
    net.stop()
    assert [x for x in leftovers(run_root)] == []
    assert all(r.state.finished for r in all_runs(run_root))
    assert not _sessions_after(machine)


@pytest.mark.bmv2
def test_fattree_k4_over_two_machines(machine, run_root):
    """fattree:k=4 over this machine and the second: placement, bring-up, routes, all pairs; then
    teardown and `dcnlab clean` leave nothing on either side."""
    from dcnlab.emu.cleanup import clean
    from dcnlab.emu.cluster.network import ClusterNetwork
    from dcnlab.emu.options import NetOptions
    from dcnlab.topos.spec import parse_spec

    f = parse_spec("fattree:k=4")
    net = ClusterNetwork(f, parse_servers(f"localhost,{machine.alias}"), NetOptions(agents=False),
                         ssh_config=machine.ssh_config)
    pl = net.placement
    assert [len(p.switches) for p in pl.parts] == [10, 10] and len(pl.cut) == 8
    try:
        net.start()
        run = net.run
        assert run is not None
        far = f"dcnlab-{run.id}-m1"
        assert netns.exists(net.netns) and netns.exists(far)
        r = net.pools[1].first.run(netns.command(far, "ip", "-d", "-o", "link", "show", "type", "vxlan"))
        assert r.stdout.count("vxlan") >= 8 and len(r.stdout.splitlines()) == 8, r.stdout
        reach = net.reachability()
        assert reach.complete, reach.summary() + f" unreachable: {reach.unreachable[:10]}"
        assert len(reach.hosts) == 16 and reach.pairs == 240
        remote_pids = [sw.remote_pid for sw in net.switches.values() if hasattr(sw, "remote_pid")]
        assert len(remote_pids) == 10
        net.check_switches()
    finally:
        net.stop()
    run = net.run
    assert run is not None and run.state.finished
    assert leftovers(run_root) == []
    assert records.remote_leftovers(run) == []
    assert not netns.exists(net.netns) and not netns.exists(f"dcnlab-{run.id}-m1")
    assert not any(os.path.exists(f"/proc/{p}") and "simple_switch" in Path(f"/proc/{p}/cmdline").read_text()
                   for p in remote_pids)
    assert not _sessions_after(machine)
    r = clean(force=True)
    assert r.killed == 0 and leftovers(run_root) == []


@pytest.mark.bmv2
def test_clean_after_a_killed_coordinator(machine, run_root, tmp_path):
    """`dcnlab run --servers` killed with SIGKILL mid-run: `dcnlab clean` here stops what is left on both
    machines (the agent there already tore its part down when its SSH connection closed)."""
    env = {**os.environ, "DCNLAB_RUN_ROOT": str(run_root)}
    argv = [sys.executable, "-m", "dcnlab", "run", "fattree:k=4", "--servers", f"localhost,{machine.alias}",
            "--ssh-config", str(machine.ssh_config), "--hold", "120"]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    lines: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)

    t = threading.Thread(target=read, daemon=True)
    t.start()
    deadline = time.monotonic() + 240
    while not any("holding the fabric up" in x for x in lines) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert proc.poll() is None, "".join(lines)
    os.kill(proc.pid, 9)
    proc.wait()
    runs = [r for r in all_runs(run_root) if not r.id.endswith("-m1")]
    assert len(runs) == 1 and not runs[0].state.finished
    r = subprocess.run([sys.executable, "-m", "dcnlab", "clean", "--force"], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert leftovers(run_root) == [], r.stdout
    assert records.remote_leftovers(runs[0]) == []
    assert not _sessions_after(machine)
