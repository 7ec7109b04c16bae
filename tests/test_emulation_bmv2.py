"""Emulation with real BMv2 switches and Mininet hosts (marker ``bmv2``; root and the toolchain)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import netcheck

import interrupts

from dcnlab.controller.runtime import TableEntry
from dcnlab.emu import links, netns
from dcnlab.emu.cleanup import leftovers, tagged
from dcnlab.emu.network import FabricNetwork, NetOptions
from dcnlab.topos import parse_spec
from dcnlab.topos.errors import UserError
from dcnlab.traffic import measure
from waiting import received, wait_until

pytestmark = pytest.mark.bmv2


@pytest.fixture(autouse=True)
def isolated_runs(tmp_path, monkeypatch):
    """Each test gets its own run root; afterwards none of its runs may have left anything."""
    root = tmp_path / "runs"
    monkeypatch.setenv("DCNLAB_RUN_ROOT", str(root))
    root_links = netcheck.root_interfaces()
    yield
    if root.is_dir():
        assert leftovers(root) == []
    netcheck.assert_none_left(root_links)


def assert_clean(net: FabricNetwork) -> None:
    for sw in net.switches.values():
        assert sw.proc.poll() is not None, f"{sw.cfg.name} still running"
        assert not sw.cfg.socket_path.exists(), f"{sw.cfg.socket_path} left behind"
    for host in net.hosts.values():
        assert not Path(f"/proc/{host.pid}").exists(), f"host shell {host.pid} left behind"
    for a in net.agents.values():
        assert a.proc.poll() is not None
    assert not netns.exists(net.netns), f"namespace {net.netns} left behind"
    assert tagged(net.run.id) == []


@pytest.mark.parametrize("spec", ["bcube:n=4,k=1", "fattree:k=4", "dragonfly:p=1,a=4,h=2,arrangement=relative"])
def test_all_pairs_reachable_and_clean_teardown(spec):
    fabric = parse_spec(spec)
    net = FabricNetwork(fabric, NetOptions())
    with net:
        reach = net.reachability()
        assert len(reach.hosts) == fabric.num_hosts()
        assert reach.unreachable == [] and reach.complete, reach.summary()
        assert netns.exists(net.netns) and set(netns.pids(net.netns)) == {sw.pid for sw in net.switches.values()}
    assert_clean(net)


def test_a_routing_hole_is_named_in_a_few_rounds_and_told_apart_from_loss():
    fabric = parse_spec("fattree:k=4")
    from dcnlab.controller.rules import DST_FIELD, HOST_TABLE
    with FabricNetwork(fabric, NetOptions()) as net:
        dst = fabric.host(13)
        victim = [e for e in net.controller.state["e3_0"].replay() if isinstance(e.entity, TableEntry)
                  and e.entity.table == HOST_TABLE and dict(e.entity.match)[DST_FIELD] == dst.ip]
        assert len(victim) == 1
        net.controller.write({"e3_0": [-victim[0].entity]})   # e3_0 no longer knows h3_0_1
        reach = net.reachability()
    # a hole costs the check its few short rounds, not its deadline: counted in rounds, not seconds (the
    # seconds are in reach.summary(), which `dcnlab run` prints)
    assert 1 <= reach.rounds <= 4 and f"in {reach.rounds} round(s), " in reach.summary()
    holes = set(reach.unreachable)
    senders = {h.name for h in fabric.hosts()} - {dst.name}
    # every host outside e3_0 reaches h3_0_1 only through e3_0; its neighbour h3_0_0 too
    assert holes == {(s, dst.name) for s in senders}
    assert reach.reached == reach.pairs - len(senders)


def test_link_counters_equal_bytes_sent():
    fabric = parse_spec("fattree:k=4")
    from dcnlab.controller.routing import router_for
    # deep BMv2 queues: a switch thread starved for a moment by a busy machine must not drop
    # (this is a counter test, not a drop test)
    with FabricNetwork(fabric, NetOptions(ecmp=False, queue_depth=2048)) as net:
        src, dst = fabric.host(0), fabric.host(13)
        a, b = net.agent(src.name), net.agent(dst.name)
        b.call({"cmd": "recv_start", "port": 5001})
        before = measure.snapshot(net.controller)
        sent = a.call(a.send_request(net.addr(dst.name), count=200, size=250, dport=5001, flow=1, rate_pps=250))
        got = received(b, 5001, 1, 200)     # every packet has crossed every link before the counters are read
        after = measure.snapshot(net.controller)
        assert sent["bytes"] == 200 * 250 and got["bytes"] == 200 * 250 and got["lost"] == 0
        path = router_for(fabric).trace(0, 13)   # primary path (ECMP off)
        on_path = set(zip(path, path[1:]))
        for ll in measure.link_loads(fabric, after - before):
            l = ll.link
            if (l.a, l.b) in on_path:
                assert ll.a_to_b.bytes == sent["bytes"] and ll.a_to_b.packets == 200, l
            elif (l.b, l.a) in on_path:
                assert ll.b_to_a.bytes == sent["bytes"] and ll.b_to_a.packets == 200, l
            else:
                assert ll.a_to_b.packets == ll.b_to_a.packets == 0, l


def test_thrift_registers_and_queues():
    fabric = parse_spec("bcube:n=2,k=1")
    with FabricNetwork(fabric, NetOptions(queue_depth=32, queue_rate_pps=5000, agents=False)) as net:
        ch = net.controller.thrift("v0")
        ch.register_write("DcnIngress.agg.agg_value", 3, 41)
        assert ch.register_read("DcnIngress.agg.agg_value", 3) == 41
        ch.register_reset("DcnIngress.agg.agg_value")
        assert ch.register_read("DcnIngress.agg.agg_value", 3) == 0


def test_switch_restart_gets_pipeline_and_routes_back():
    fabric = parse_spec("bcube:n=2,k=1")
    with FabricNetwork(fabric) as net:
        before = len(net.controller.read_table("w0", "DcnIngress.fwd.ipv4_host"))
        old_pid = net.switches["w0"].pid
        net.restart_switch("w0")
        assert net.switches["w0"].pid != old_pid
        assert len(net.controller.read_table("w0", "DcnIngress.fwd.ipv4_host")) == before == 4
        assert net.reachability().complete


def test_failed_switch_start_quotes_the_log(monkeypatch):
    from dcnlab.emu.bmv2 import SwitchStartError
    fabric = parse_spec("bcube:n=2,k=0")
    opts = NetOptions(agents=False)
    net = FabricNetwork(fabric, opts)
    monkeypatch.setattr("dcnlab.emu.bmv2.BMv2Config.argv",
                        lambda self, binary: [str(binary), "--no-such-option"])
    with pytest.raises(SwitchStartError, match="exited with status") as e:
        net.start()
    assert "Error while parsing command line arguments" in str(e.value)  # the head of the log, not only usage
    assert_clean(net)


def test_clean_after_a_crashed_run(tmp_path):
    env = dict(os.environ, DCNLAB_RUN_ROOT=os.environ["DCNLAB_RUN_ROOT"])
    script = ("from dcnlab.emu.network import FabricNetwork, NetOptions\n"
              "from dcnlab.topos import parse_spec\nimport os, sys\n"
              "net = FabricNetwork(parse_spec('bcube:n=2,k=1'), NetOptions(agents=False)).start()\n"
              "print('UP', flush=True)\nos._exit(0)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert "UP" in out.stdout, out.stderr
    (run_dir,) = Path(env["DCNLAB_RUN_ROOT"]).iterdir()
    assert len(tagged(run_dir.name)) >= 6, "the crashed run left switches behind (as it should for this test)"
    r = subprocess.run([sys.executable, "-m", "dcnlab", "clean"], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and "cleaned 1 run(s)" in r.stdout and "1 network namespace(s)" in r.stdout, \
        r.stdout + r.stderr
    assert tagged(run_dir.name) == [] and not netns.exists(f"dcnlab-{run_dir.name}")
    from dcnlab.emu.rundir import RunDir
    assert list(RunDir.load(run_dir).sockets.glob("*.sock")) == []


def test_cli_run_reports_reachability_and_counters():
    env = dict(os.environ)
    r = subprocess.run([sys.executable, "-m", "dcnlab", "run", "bcube:n=2,k=1"], capture_output=True,
                       text=True, env=env, timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "reachability: 12/12 host pairs" in r.stdout and "0 pair(s) unreachable" in r.stdout
    assert "per-link counters" in r.stdout and "switches ready" in r.stderr
    assert leftovers(Path(env["DCNLAB_RUN_ROOT"])) == []


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_interrupted_run_leaves_nothing(sig):
    import signal
    env = dict(os.environ)
    p = interrupts.popen("run", "fattree:k=4", env=env)      # SIGINT live in the child (tests/interrupts.py)
    for line in p.stderr:
        if "started" in line:
            break
    p.send_signal(getattr(signal, sig))
    _, err = p.communicate(timeout=60)
    assert p.returncode != 0
    assert "Traceback" not in err, err
    assert leftovers(Path(env["DCNLAB_RUN_ROOT"])) == []


def test_link_rate_and_queue_shaping_on_both_ends():
    fabric = parse_spec("bcube:n=2,k=0")
    with FabricNetwork(fabric, NetOptions(bw_mbps=20, max_queue=40)) as net:
        root = links.show(net.netns, "tc", "qdisc", "show", "dev", "w0-eth0") + \
            links.show(net.netns, "tc", "class", "show", "dev", "w0-eth0")
        assert "htb" in root and "pfifo" in root and "limit 40p" in root and "rate 20Mbit" in root
        host = net.hosts["h0"].cmd("tc qdisc show dev h0-eth0; tc class show dev h0-eth0")
        assert "pfifo" in host and "rate 20Mbit" in host
        a, b = net.agent("h0"), net.agent("h1")
        b.call({"cmd": "recv_start", "port": 5001})
        a.call(a.send_request(net.addr("h1"), count=20, size=200, rate_pps=500))
        assert received(b, 5001, 0, 20)["unique"] == 20


def test_link_delay_with_netem():
    from dcnlab.emu.links import netem_available
    if not netem_available():
        pytest.skip("this kernel lacks the netem qdisc (sch_netem)")
    fabric = parse_spec("bcube:n=2,k=0")
    with FabricNetwork(fabric, NetOptions(delay="2ms")) as net:
        a, b = net.agent("h0"), net.agent("h1")
        b.call({"cmd": "recv_start", "port": 5001})
        a.call(a.send_request(net.addr("h1"), count=10, size=200, rate_pps=200))
        f = received(b, 5001, 0, 10)
        # h0 - v0 - w0 - v1 - h1: four links, each delayed 2 ms on its sending end
        assert f["unique"] == 10 and f["lat_us"][0] >= 4 * 2000


def test_cli_option_opens_mininet_cli():
    r = subprocess.run([sys.executable, "-m", "dcnlab", "run", "bcube:n=2,k=0", "--cli"],
                       input="h0 ping -c 1 10.0.0.2\nexit\n", capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    out = r.stdout + r.stderr
    assert "1 packets transmitted, 1 received" in out and "ttl=61" in out  # three P4 hops decrement TTL
    assert out.count("1 packets transmitted") == 1  # Mininet's log is printed once


def _as_nobody(code: str, ns: str | None = None) -> str:
    """Run Python ``code`` as user nobody (optionally inside namespace ``ns``); return its stdout.

    The modules the snippets use are imported before the privileges are dropped; nobody may not be
    able to read the checkout or its venv (e.g. under a 0700 /root)."""
    pre = "import ctypes, os, socket; os.setgroups([]); os.setgid(65534); os.setuid(65534); "
    r = subprocess.run([sys.executable, "-c", pre + code], capture_output=True, text=True, cwd="/",
                       preexec_fn=netns.enter(ns) if ns else None)
    return r.stdout.strip() + r.stderr.strip()


def test_control_channels_are_out_of_reach_of_other_users_and_namespaces():
    fabric = parse_spec("bcube:n=2,k=0")
    with FabricNetwork(fabric, NetOptions(agents=False)) as net:
        sw = net.switches["w0"]
        sock, port = sw.cfg.socket_path, sw.cfg.thrift_port
        unix = (f"import socket; s=socket.socket(socket.AF_UNIX)\n"
                f"try: s.connect({str(sock)!r}); print('CONNECTED')\nexcept OSError as e: print(type(e).__name__)")
        tcp = (f"import socket; s=socket.socket(); s.settimeout(1)\n"
               f"print('CONNECTED' if s.connect_ex(('127.0.0.1', {port})) == 0 else 'REFUSED')")
        # gRPC: only root can open the socket in the root-only run directory
        assert _as_nobody(unix) == "PermissionError"
        assert (sock.parent.stat().st_mode & 0o777) == 0o700
        # Thrift: nothing listens in the machine's own namespace...
        assert _as_nobody(tcp) == "REFUSED"
        r = subprocess.run([sys.executable, "-c", tcp], capture_output=True, text=True)
        assert r.stdout.strip() == "REFUSED"
        # ...and an unprivileged process cannot enter the run's namespace to get at it
        enter = (f"import ctypes, os; libc = ctypes.CDLL(None, use_errno=True)\n"
                 f"try: fd = os.open('/run/netns/{net.netns}', os.O_RDONLY)\n"
                 f"except OSError as e: print('EACCES'); raise SystemExit\n"
                 f"print('ENTERED' if libc.setns(fd, 0x40000000) == 0 else os.strerror(ctypes.get_errno()))")
        assert _as_nobody(enter) in ("Operation not permitted", "EACCES")
        # the controller's own channels work
        assert _connects_in(net.netns, port)
        ch = net.controller.thrift("w0")
        ch.register_write("DcnIngress.agg.agg_value", 1, 7)
        assert ch.register_read("DcnIngress.agg.agg_value", 1) == 7


def _connects_in(ns: str, port: int) -> bool:
    code = f"import socket; s=socket.socket(); s.settimeout(1); print(s.connect_ex(('127.0.0.1', {port})) == 0)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, preexec_fn=netns.enter(ns))
    return r.stdout.strip() == "True"


def test_two_runs_of_the_same_fabric_at_once():
    fabric = parse_spec("fattree:k=4")
    a, b = FabricNetwork(fabric, NetOptions()), FabricNetwork(fabric, NetOptions())
    with a, b:
        assert a.netns != b.netns
        ra, rb = a.reachability(), b.reachability()
        assert ra.complete and rb.complete, (ra.summary(), rb.summary())
    assert_clean(a)
    assert_clean(b)


def test_a_dead_switch_is_noticed_and_named():
    fabric = parse_spec("bcube:n=2,k=1")
    with FabricNetwork(fabric, NetOptions(agents=False)) as net:
        (net.run.path / "bmv2-w1.out").write_text("bmv2: simulated fatal error\n")
        t = time.monotonic()
        net.switches["w1"].signal(9)
        wait_until(lambda: net.failures, "the monitor notices the dead switch")   # a hang guard, not a time
        f = net.failures[0]
        assert f.switch == "w1" and f.status == -9 and not f.restarted
        assert f.at > t                 # noticed after the kill (the monitor polls every monitor_interval)
        assert "simulated fatal error" in f.log_tail
        with pytest.raises(UserError, match="switch w1 died .exit status -9.; not restarted"):
            net.check_switches()
    assert_clean(net)


def test_watch_restarts_a_dead_switch_and_repushes_its_state():
    fabric = parse_spec("bcube:n=2,k=1")
    with FabricNetwork(fabric, NetOptions(watch=True)) as net:
        old = net.switches["v1"].pid
        net.switches["v1"].signal(9)
        wait_until(lambda: net.failures, "the watcher restarts the dead switch")
        assert net.failures and net.failures[0].restarted and net.failures[0].switch == "v1"
        assert net.switches["v1"].pid != old
        assert len(net.controller.read_table("v1", "DcnIngress.fwd.ipv4_host")) == 4
        assert net.reachability().complete
        net.check_switches()
    assert_clean(net)


def test_watcher_repushes_after_an_unannounced_restart():
    fabric = parse_spec("bcube:n=2,k=1")
    with FabricNetwork(fabric, NetOptions(watch=True)) as net:
        sw = net.switches["v2"]
        sw.signal(9)
        sw.proc.wait()
        sw.start()                      # nobody tells the controller
        def entries() -> list:
            try:
                return net.controller.read_table("v2", "DcnIngress.fwd.ipv4_host")
            except Exception:           # stream not back yet
                return []

        wait_until(lambda: len(entries()) == 4, "the watcher re-pushes v2's four entries")
        assert net.reachability().complete


def test_logs_and_pcaps_in_the_run_directory():
    fabric = parse_spec("bcube:n=2,k=0")
    with FabricNetwork(fabric, NetOptions(pcap=True, log_level="info", grpc_log=True)) as net:
        net.reachability()
        run = net.run.path
        log = net.switches["w0"].cfg.log_file
    text = log.read_text()
    assert log.parent == run and "Thrift server was started" in text and "[W]" not in text
    pcaps = {p.name: p.stat().st_size for p in (run / "pcap").iterdir()}
    assert {"w0-eth0_in.pcap", "w0-eth0_out.pcap", "w0-eth1_in.pcap", "w0-eth1_out.pcap"} <= set(pcaps)
    assert pcaps["w0-eth0_in.pcap"] > 24  # more than the pcap file header: packets were captured
    assert "SetForwardingPipelineConfig" in (run / "p4rt-w0.log").read_text()


def test_a_cut_link_drops_both_ways_and_comes_back():
    fabric = parse_spec("bcube:n=2,k=0")   # h0 - v0 - w0 - v1 - h1
    with FabricNetwork(fabric, NetOptions()) as net:
        assert net.reachability().complete
        net.cut_link("v0", "w0")
        cut = net.reachability(attempts=2)
        assert set(cut.unreachable) == {("h0", "h1"), ("h1", "h0")}
        net.restore_link("v0", "w0")
        assert net.reachability().complete
        with pytest.raises(UserError, match="no link between v0 and v1"):
            net.cut_link("v0", "v1")
