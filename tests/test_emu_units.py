"""Emulation building blocks that need no BMv2: argv, shaping, options, namespaces, run records, clean."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from as_nobody import run_cli_as_nobody
from dcnlab.emu import bmv2, links, netns
from dcnlab.emu.cleanup import clean
from dcnlab.emu.counters import interface_stats
from dcnlab.emu.network import FabricNetwork, NetOptions
from dcnlab.emu.rundir import SHORT_SOCKET_ROOT, TAG_VAR, RunDir, all_runs
from dcnlab.cli.errors import UserError
from dcnlab.topos import parse_spec


def test_bmv2_argv_serves_p4runtime_on_a_unix_socket_in_the_run_dir(tmp_path):
    cfg = bmv2.BMv2Config("e0_0", 7, {0: "e0_0-eth0", 2: "e0_0-eth2"}, 9097, tmp_path, "dcnlab-x")
    argv = cfg.argv(Path("/x/simple_switch_grpc"))
    assert argv[:3] == ["/x/simple_switch_grpc", "--device-id", "7"]
    assert "0@e0_0-eth0" in argv and "2@e0_0-eth2" in argv
    assert argv[argv.index("--thrift-port") + 1] == "9097"
    assert argv[-4:] == ["--no-p4", "--", "--grpc-server-addr", f"unix:{tmp_path}/sw7.sock"]
    assert cfg.grpc_addr == f"unix:{tmp_path}/sw7.sock"
    assert not any(a.startswith("--notifications") for a in argv)
    assert "--log-file" not in argv and "--pcap" not in argv
    cfg2 = bmv2.BMv2Config("s", 0, {}, 2, tmp_path, log_level="debug", pcap=True)
    argv2 = cfg2.argv(Path("ss"))
    assert argv2[argv2.index("-L") + 1] == "debug" and argv2[argv2.index("--pcap") + 1] == str(tmp_path / "pcap")


def test_wait_ready_reports_a_dead_switch_with_its_log(tmp_path):
    cfg = bmv2.BMv2Config("w3", 0, {}, 2, tmp_path)
    cfg.out_file.write_text("line 1\nerror: could not bind\n")
    sw = bmv2.BMv2Process(cfg)
    sw.proc = subprocess.Popen(["false"])
    sw.proc.wait()
    with pytest.raises(bmv2.SwitchStartError, match=r"(?s)w3 exited with status 1.*could not bind"):
        bmv2.wait_ready([sw], timeout=60)     # a hang guard: the dead switch is found at once


def test_wait_ready_times_out_naming_the_switch(tmp_path):
    sw = bmv2.BMv2Process(bmv2.BMv2Config("slow", 0, {}, 2, tmp_path))
    sw.proc = subprocess.Popen(["sleep", "30"])
    try:
        with pytest.raises(bmv2.SwitchStartError, match="not ready after 0 s .slow."):
            bmv2.wait_ready([sw], timeout=0.2)
    finally:
        sw.proc.kill()
        sw.proc.wait()


def test_shaping_lines():
    assert links.Shaping().tc_lines("x") == []
    lines = links.Shaping(10, "2ms", 50).tc_lines("e0_0-eth2")
    assert lines == ["qdisc add dev e0_0-eth2 root handle 1: htb default 1",
                     "class add dev e0_0-eth2 parent 1: classid 1:1 htb rate 10mbit burst 15k quantum 1514",
                     "qdisc add dev e0_0-eth2 parent 1:1 handle 10: netem delay 2ms limit 50"]
    assert links.Shaping(delay="1ms").tc_lines("d") == ["qdisc add dev d root handle 10: netem delay 1ms"]
    assert links.Shaping(max_queue=30).tc_lines("d") == ["qdisc add dev d root handle 10: pfifo limit 30"]


@pytest.mark.netns
def test_delay_without_netem_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(links, "netem_available", lambda: False)
    with pytest.raises(links.LinkSetupError, match="needs the kernel's netem qdisc"):
        links.Shaping(delay="1ms").check_kernel()
    links.Shaping(bw_mbps=5, max_queue=10).check_kernel()  # no delay: no netem needed


def test_loss_lines_without_netem():
    """Loss is a classic BPF filter on the clsact egress hook: drop when a random u32 < p * 2^32."""
    t = round(0.3 * 2**32)
    assert links.Shaping(loss_pct=30).tc_lines("d") == [
        "qdisc add dev d clsact",
        f'filter add dev d egress prio 1 bpf da bytecode "4,32 0 0 4294963256,53 0 1 {t},6 0 0 0,6 0 0 2"']
    lines = links.Shaping(bw_mbps=10, max_queue=20, loss_pct=0.5).tc_lines("d")
    assert [x.split(" dev d ")[1].split()[0] for x in lines] == ["root", "parent", "parent", "clsact", "egress"]
    assert not any("netem" in x for x in lines)
    assert links.Shaping(loss_pct=1).active and not links.Shaping().active
    assert links.loss_bytecode(1e-9).endswith(" 1,6 0 0 0,6 0 0 2")          # never a threshold of 0


@pytest.mark.parametrize("loss", [0, 100, -5, 150, float("nan"), float("inf"), True, "30"])
def test_loss_out_of_range_names_the_option(loss):
    with pytest.raises(links.LinkSetupError) as e:
        links.Shaping(loss_pct=loss)
    msg = str(e.value)
    assert msg.startswith(f"link loss={loss!r} is out of range; valid: 0 < loss < 100") and "\n" not in msg


@pytest.mark.netns
def test_loss_filter_drops_about_that_fraction():
    """4,000 frames through a veth end with 30% loss: the peer receives 70% of them, within 5 standard
    deviations of the binomial (±2.3 points)."""
    name = f"dcnlab-test-loss-{os.getpid()}"
    netns.create(name)
    try:
        links.create(name, [links.VethPair("lossa", "lossb")])
        links.shape(name, links.Shaping(loss_pct=30).tc_lines("lossa"))
        send = ("import socket\ns = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)\ns.bind(('lossa', 0))\n"
                "f = bytes.fromhex('ffffffffffff02000000000188b5') + bytes(50)\nfor _ in range(4000):\n"
                "    try:\n        s.send(f)\n    except OSError:\n        pass\n")   # a dropped frame is ENOBUFS
        subprocess.run([sys.executable, "-c", send], check=True, timeout=60, preexec_fn=netns.enter(name))
        rx = interface_stats(name)["lossb"]["rx"]["packets"]
        n, p = 4000, 0.7
        sd = (n * p * (1 - p)) ** 0.5
        assert abs(rx - n * p) < 5 * sd, f"{rx} of {n} frames arrived; expected about {n * p:.0f}"
    finally:
        netns.delete(name)


def test_interface_names_are_checked():
    with pytest.raises(links.LinkSetupError, match="longer than 15"):
        links.check_names(["h123_123_123-eth0"])
    links.check_names(["lo", "e0_0-eth1"])  # names live in the run's own namespace: no clash check


@pytest.mark.parametrize("kwargs, message", [
    ({"bw_mbps": 0}, "--bw=0 is out of range; valid: 0.001 <= --bw <= 100000 Mbit/s"),
    ({"bw_mbps": -5}, "--bw"),
    ({"delay": "fast"}, "--delay='fast' is not a delay; valid: a positive number with unit us, ms or s"),
    ({"delay": "0ms"}, "--delay"),
    ({"max_queue": 0}, "--max-queue=0 is out of range; valid: 1 <= --max-queue"),
    ({"queue_rate_pps": 0}, "--queue-rate=0 is out of range"),
    ({"queue_depth": -1}, "--queue-depth=-1 is out of range"),
    ({"start_timeout": 0}, "--timeout=0 is out of range"),
    ({"log_level": "loud"}, "--log-level='loud' is not a level; valid: off, error"),
])
def test_bad_options_name_the_option_and_its_range(kwargs, message):
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")):
        NetOptions(**kwargs).validate()
    NetOptions(bw_mbps=10, delay="1.5ms", max_queue=10, queue_rate_pps=100, queue_depth=64).validate()


@pytest.fixture
def run_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``$DCNLAB_RUN_ROOT`` for tests that create run records, usable by any user.

    Under pytest's long ``tmp_path`` a switch socket's path passes the 107-byte limit, so RunDir keeps
    the sockets under /run/dcnlab, which only root may create (root runs cover that case); another
    user gets a short directory under /tmp, where the sockets stay in the run directory."""
    root = tmp_path if os.geteuid() == 0 else Path(tempfile.mkdtemp(prefix="dcnlab-runs-"))
    monkeypatch.setenv("DCNLAB_RUN_ROOT", str(root))
    yield root
    # a run under pytest's long tmp path keeps its sockets in /run/dcnlab/<id>: these runs never start, so
    # nothing tears them down; without this every suite left three empty directories there
    for run in root.iterdir() if root.is_dir() else ():
        _remove_socket_dir(run.name)
    if root != tmp_path:
        shutil.rmtree(root)


def _remove_socket_dir(run_id: str) -> None:
    d = SHORT_SOCKET_ROOT / run_id
    if d.is_dir():
        for sock in d.glob("*.sock"):
            sock.unlink(missing_ok=True)
        d.rmdir()


def test_run_dir_is_root_only_and_unique(run_root):
    a, b = RunDir.create("fattree:k=4"), RunDir.create("fattree:k=4")
    assert a.path != b.path
    assert a.path.stat().st_mode & 0o777 == 0o700
    assert a.tag == {TAG_VAR: a.id}
    assert a.sockets == a.path or str(a.sockets).startswith("/run/dcnlab/")
    assert len(str(a.sockets / "sw65535.sock")) <= 107


@pytest.mark.netns
def test_netns_create_enter_pids_delete():
    name = f"dcnlab-test-{os.getpid()}"
    netns.create(name)
    try:
        assert netns.exists(name)
        p = subprocess.Popen(["sleep", "30"], preexec_fn=netns.enter(name))
        try:
            assert netns.pids(name) == [p.pid]
            out = subprocess.run(["cat", "/proc/sys/net/ipv6/conf/default/disable_ipv6"], capture_output=True,
                                 text=True, preexec_fn=netns.enter(name)).stdout
            assert out.strip() == "1"
        finally:
            p.kill()
            p.wait()
    finally:
        netns.delete(name)
    assert not netns.exists(name)
    netns.delete(name)  # absent: fine


@pytest.mark.netns
def test_netns_create_without_sbin_on_path(monkeypatch):
    """sysctl(8) is in /usr/sbin: a PATH of /usr/bin:/bin (sudo, cron, env) must still work."""
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    name = f"dcnlab-test-path-{os.getpid()}"
    try:
        netns.create(name)
        out = subprocess.run(["cat", "/proc/sys/net/ipv6/conf/all/disable_ipv6"], capture_output=True, text=True,
                             preexec_fn=netns.enter(name)).stdout
        assert out.strip() == "1"
    finally:
        netns.delete(name)
    assert not netns.exists(name)


def _fail_loopback_up(real):
    def ip(*args: str, **kw) -> subprocess.CompletedProcess:
        if args[-4:] == ("link", "set", "lo", "up"):
            return subprocess.CompletedProcess(["ip", *args], 2, "", "RTNETLINK answers: injected failure")
        return real(*args, **kw)
    return ip


def _fail_sysctl(name: str, values: dict[str, str]) -> None:
    raise netns.NetnsError(f"cannot set {', '.join(values)} in network namespace {name}: injected failure")


@pytest.mark.netns
@pytest.mark.parametrize("step", ["loopback", "sysctl", "interrupt"])
def test_netns_create_leaves_nothing_when_a_later_step_fails(monkeypatch, step):
    """``ip netns add`` succeeded, then bringing up lo or the sysctl fails (or Ctrl-C comes): the namespace
    is deleted again and the step's own error is raised."""
    name = f"dcnlab-test-half-{os.getpid()}"
    if step == "loopback":
        monkeypatch.setattr(netns, "_ip", _fail_loopback_up(netns._ip))
        expected: type[BaseException] = netns.NetnsError
        match: str | None = "cannot bring up loopback.*injected failure"
    elif step == "sysctl":
        monkeypatch.setattr(netns, "sysctl", _fail_sysctl)
        expected, match = netns.NetnsError, "disable_ipv6.*injected failure"
    else:
        def interrupted(name: str, values: dict[str, str]) -> None:
            assert netns.exists(name)       # the namespace was there when the interrupt came
            raise KeyboardInterrupt
        monkeypatch.setattr(netns, "sysctl", interrupted)
        expected, match = KeyboardInterrupt, None
    try:
        with pytest.raises(expected, match=match):
            netns.create(name)
        assert not netns.exists(name)
        assert name not in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
    finally:
        monkeypatch.undo()
        netns.delete(name)


def test_emulation_size_limit_is_a_clear_error():
    with pytest.raises(UserError, match="max_switches=512"):
        FabricNetwork(parse_spec("fattree:k=24"), NetOptions())


def _spawn(name: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(["sleep", "60"], start_new_session=True, env=None if env is None else {**os.environ, **env})


def test_clean_kills_only_recorded_matching_processes(run_root):
    recorded, unrelated, reused = _spawn("a"), _spawn("b"), _spawn("c")
    try:
        run = RunDir.create("bcube:n=2,k=1")
        run.record_process("switch:v0", recorded.pid, "sleep")
        run.record_process("switch:v1", reused.pid, "simple_switch_grpc")  # pid reused by another program
        run.state.owner_pid = 999999999  # owner gone: a crashed run
        run.save()
        report = clean()
        assert report.runs == [run.id] and report.killed == 1
        assert recorded.wait(timeout=60) is not None
        assert unrelated.poll() is None and reused.poll() is None
        assert all(r.state.finished for r in all_runs())
        assert clean().runs == []  # idempotent
    finally:
        for p in (recorded, unrelated, reused):
            p.kill()
            p.wait()


def test_clean_finds_unrecorded_processes_by_the_run_tag(run_root):
    run = RunDir.create("bcube:n=2,k=1")
    other = RunDir.create("bcube:n=2,k=1")
    mine, theirs = _spawn("a", run.tag), _spawn("b", other.tag)
    try:
        run.state.owner_pid = other.state.owner_pid = 999999999
        run.save()
        report = _clean_one(run)
        assert report.killed == 1 and mine.wait(timeout=60) is not None
        assert theirs.poll() is None
    finally:
        for p in (mine, theirs):
            p.kill()
            p.wait()


def _clean_one(run: RunDir):
    from dcnlab.emu.cleanup import CleanReport, clean_run
    r = CleanReport()
    clean_run(run, r)
    return r


def test_clean_skips_live_runs_unless_forced(run_root):
    p = _spawn("x")
    owner = subprocess.Popen(["sleep", "60"])
    try:
        run = RunDir.create("fattree:k=4")
        run.record_process("switch:e0_0", p.pid, "sleep")
        run.state.owner_pid = owner.pid
        run.save()
        r = clean()
        assert r.runs == [] and r.skipped_live == [run.path.name] and p.poll() is None
        assert clean(force=True).runs == [run.path.name]
        assert p.wait(timeout=60) is not None
    finally:
        for q in (p, owner):
            q.kill()
            q.wait()


def test_cli_clean_output(tmp_path):
    env = dict(os.environ, DCNLAB_RUN_ROOT=str(tmp_path))
    r = subprocess.run([sys.executable, "-m", "dcnlab", "clean"], capture_output=True, text=True, env=env)
    if os.geteuid() != 0:   # run records and namespaces are root's: another user is refused in one line
        assert r.returncode == 2 and r.stderr.startswith("dcnlab: error: dcnlab clean needs root"), r.stderr
        return
    assert r.returncode == 0 and r.stdout.startswith("cleaned 0 run(s)")


def test_non_root_gets_a_clear_error_before_anything_is_created(tmp_path):
    """As nobody (the CLI is imported first, so the checkout may live under a 0700 /root)."""
    env = dict(os.environ, DCNLAB_RUN_ROOT=str(tmp_path / "runs"))
    r = run_cli_as_nobody(["run", "bcube:n=2,k=0"], env=env)
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("dcnlab: error: dcnlab run needs root") and "Traceback" not in r.stderr
    assert "not root" in r.stderr and len(r.stderr.splitlines()) == 1 and "torn down" not in r.stderr
    assert not (tmp_path / "runs").exists()
