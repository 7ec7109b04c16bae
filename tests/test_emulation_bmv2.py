"""Emulation with real BMv2 switches and Mininet hosts (marker ``bmv2``; root and the toolchain)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from emu.network import FabricNetwork, NetOptions
from topos import parse_spec
from traffic import measure

pytestmark = pytest.mark.bmv2


@pytest.fixture(autouse=True)
def isolated_runs(tmp_path, monkeypatch):
    """Each test gets its own run root; afterwards none of its runs may have left anything."""
    root = tmp_path / "runs"
    monkeypatch.setenv("DCNLAB_RUN_ROOT", str(root))
    yield
    if root.is_dir():
        tags = [p.name for p in root.iterdir()]
        rules = subprocess.run(["iptables", "-w", "-S", "INPUT"], capture_output=True, text=True).stdout
        assert not [t for t in tags if f"dcnlab:{t}" in rules], "firewall rule left behind"
        assert _left_behind(root) == []


def bmv2_pids() -> set[int]:
    out = subprocess.run(["pgrep", "-f", "simple_switch_grpc"], capture_output=True, text=True).stdout
    return {int(p) for p in out.split()}


def assert_clean(net: FabricNetwork) -> None:
    for sw in net.switches.values():
        assert sw.proc.poll() is not None, f"{sw.cfg.name} still running"
    for d in net.root_intfs:
        assert not Path("/sys/class/net", d).exists(), f"{d} left behind"
    for host in net.hosts.values():
        assert not Path(f"/proc/{host.pid}").exists(), f"host shell {host.pid} left behind"
    for a in net.agents.values():
        assert a.proc.poll() is not None
    rules = subprocess.run(["iptables", "-w", "-S", "INPUT"], capture_output=True, text=True).stdout
    assert f"dcnlab:{net.run.path.name}" not in rules


@pytest.mark.parametrize("spec", ["bcube:n=4,k=1", "fattree:k=4", "dragonfly:p=1,a=4,h=2,arrangement=relative"])
def test_all_pairs_reachable_and_clean_teardown(spec):
    fabric = parse_spec(spec)
    net = FabricNetwork(fabric, NetOptions())
    with net:
        heard = net.reachability()
        n = fabric.num_hosts()
        assert len(heard) == n
        missing = [(s, d) for d, srcs in heard.items() for s in heard if s != d and s not in srcs]
        assert missing == []
        rules = subprocess.run(["iptables", "-w", "-S", "INPUT"], capture_output=True, text=True).stdout
        assert f"dcnlab:{net.run.path.name}" in rules
    assert_clean(net)


def test_link_counters_equal_bytes_sent():
    fabric = parse_spec("fattree:k=4")
    from controller.routing import router_for
    with FabricNetwork(fabric, NetOptions(ecmp=False)) as net:
        src, dst = fabric.host(0), fabric.host(13)
        a, b = net.agent(src.name), net.agent(dst.name)
        b.call({"cmd": "recv_start", "port": 5001})
        before = measure.snapshot(net.controller)
        # paced: an unpaced burst overflows BMv2's 64-packet queues (a drop test, not a counter test)
        sent = a.call(a.send_request(net.addr(dst.name), count=200, size=250, dport=5001, flow=1, rate_pps=1000))
        time.sleep(0.5)
        after = measure.snapshot(net.controller)
        got = b.call({"cmd": "recv_stop", "port": 5001})["flows"]["1"]
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
        heard = net.reachability()
        assert all(len(v) == 3 for v in heard.values())


def test_failed_switch_start_quotes_the_log(monkeypatch):
    from emu.bmv2 import SwitchStartError
    fabric = parse_spec("bcube:n=2,k=0")
    opts = NetOptions(agents=False)
    net = FabricNetwork(fabric, opts)
    monkeypatch.setattr("emu.bmv2.BMv2Config.argv",
                        lambda self, binary: [str(binary), "--no-such-option"])
    with pytest.raises(SwitchStartError, match="exited with status") as e:
        net.start()
    assert "Error while parsing command line arguments" in str(e.value)  # the head of the log, not only usage
    assert_clean(net)


def test_clean_after_a_crashed_run(tmp_path):
    env = dict(os.environ, DCNLAB_RUN_ROOT=os.environ["DCNLAB_RUN_ROOT"])
    script = ("from emu.network import FabricNetwork, NetOptions\n"
              "from topos import parse_spec\nimport os, sys\n"
              "net = FabricNetwork(parse_spec('bcube:n=2,k=1'), NetOptions(agents=False)).start()\n"
              "print('UP', flush=True)\nos._exit(0)\n")
    before = bmv2_pids()
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert "UP" in out.stdout, out.stderr
    assert bmv2_pids() - before, "the crashed run left switches behind (as it should for this test)"
    r = subprocess.run([sys.executable, "-m", "experiments", "clean"], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and "cleaned 1 run(s)" in r.stdout, r.stdout + r.stderr
    assert not (bmv2_pids() - before)
    leftover = [d for d in os.listdir("/sys/class/net") if d.startswith(("v0-", "v1-", "w0-", "w2-"))]
    assert leftover == []


def _left_behind(run_root: Path) -> list[str]:
    from emu.rundir import RunDir
    out = []
    for p in run_root.iterdir():
        st = RunDir.load(p).state
        out += [f"pid {pid}" for pid in st.processes.values() if Path(f"/proc/{pid}").exists()
                and b"zombie" not in Path(f"/proc/{pid}/status").read_bytes().lower()]
        out += [d for d in st.interfaces if Path("/sys/class/net", d).exists()]
    return out


def test_cli_run_reports_reachability_and_counters():
    env = dict(os.environ)
    r = subprocess.run([sys.executable, "-m", "experiments", "run", "bcube:n=2,k=1"], capture_output=True,
                       text=True, env=env, timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "reachability: 12/12 host pairs" in r.stdout
    assert "per-link counters" in r.stdout and "switches ready" in r.stderr
    assert _left_behind(Path(env["DCNLAB_RUN_ROOT"])) == []


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_interrupted_run_leaves_nothing(sig):
    import signal
    env = dict(os.environ)
    p = subprocess.Popen([sys.executable, "-m", "experiments", "run", "fattree:k=4"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    for line in p.stderr:
        if "started" in line:
            break
    p.send_signal(getattr(signal, sig))
    _, err = p.communicate(timeout=60)
    assert p.returncode != 0
    assert "Traceback" not in err, err
    assert _left_behind(Path(env["DCNLAB_RUN_ROOT"])) == []


def test_link_rate_and_queue_shaping_on_both_ends():
    fabric = parse_spec("bcube:n=2,k=0")
    with FabricNetwork(fabric, NetOptions(bw_mbps=20, max_queue=40)) as net:
        root = subprocess.run("tc qdisc show dev w0-eth0; tc class show dev w0-eth0", shell=True,
                              capture_output=True, text=True).stdout
        assert "htb" in root and "pfifo" in root and "limit 40p" in root and "rate 20Mbit" in root
        host = net.hosts["h0"].cmd("tc qdisc show dev h0-eth0; tc class show dev h0-eth0")
        assert "pfifo" in host and "rate 20Mbit" in host
        a, b = net.agent("h0"), net.agent("h1")
        b.call({"cmd": "recv_start", "port": 5001})
        a.call(a.send_request(net.addr("h1"), count=20, size=200, rate_pps=500))
        time.sleep(0.3)
        assert b.call({"cmd": "recv_stop", "port": 5001})["flows"]["0"]["unique"] == 20


def test_link_delay_with_netem():
    from emu.links import netem_available
    if not netem_available():
        pytest.skip("this kernel lacks the netem qdisc (sch_netem)")
    fabric = parse_spec("bcube:n=2,k=0")
    with FabricNetwork(fabric, NetOptions(delay="2ms")) as net:
        a, b = net.agent("h0"), net.agent("h1")
        b.call({"cmd": "recv_start", "port": 5001})
        a.call(a.send_request(net.addr("h1"), count=10, size=200, rate_pps=200))
        time.sleep(0.3)
        f = b.call({"cmd": "recv_stop", "port": 5001})["flows"]["0"]
        # h0 - v0 - w0 - v1 - h1: four links, each delayed 2 ms on its sending end
        assert f["unique"] == 10 and f["lat_us"][0] >= 4 * 2000


def test_cli_option_opens_mininet_cli():
    r = subprocess.run([sys.executable, "-m", "experiments", "run", "bcube:n=2,k=0", "--cli"],
                       input="h0 ping -c 1 10.0.0.2\nexit\n", capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    out = r.stdout + r.stderr
    assert "1 packets transmitted, 1 received" in out and "ttl=61" in out  # three P4 hops decrement TTL
    assert out.count("1 packets transmitted") == 1  # Mininet's log is printed once


@pytest.fixture
def outside_netns():
    """A namespace that reaches the root namespace over our own veth (link-local /30)."""
    import uuid
    tag = uuid.uuid4().hex[:6]
    ns, root_if, ns_if = f"dlg{tag}", f"dlg{tag}r", f"dlg{tag}n"
    sh = lambda c: subprocess.run(c, shell=True, check=True, capture_output=True)
    sh(f"ip netns add {ns}")
    try:
        sh(f"ip link add {root_if} type veth peer name {ns_if} netns {ns}")
        sh(f"ip addr add 169.254.77.1/30 dev {root_if} && ip link set {root_if} up")
        sh(f"ip -n {ns} addr add 169.254.77.2/30 dev {ns_if} && ip -n {ns} link set {ns_if} up")
        yield ns
    finally:
        subprocess.run(f"ip link del {root_if}", shell=True, capture_output=True)
        subprocess.run(f"ip netns del {ns}", shell=True, capture_output=True)


def _connects(ns: str | None, ip: str, port: int) -> bool:
    code = (f"import socket; s=socket.socket(); s.settimeout(1.5); "
            f"print(s.connect_ex(('{ip}', {port})) == 0)")
    argv = ([] if ns is None else ["ip", "netns", "exec", ns]) + [sys.executable, "-c", code]
    return subprocess.run(argv, capture_output=True, text=True).stdout.strip() == "True"


@pytest.mark.parametrize("guard", [True, False])
def test_thrift_ports_unreachable_from_outside(outside_netns, guard):
    fabric = parse_spec("bcube:n=2,k=0")
    with FabricNetwork(fabric, NetOptions(agents=False, thrift_guard=guard)) as net:
        port = net.switches["w0"].cfg.thrift_port
        assert _connects(None, "127.0.0.1", port)                       # the controller's path works
        assert _connects(outside_netns, "169.254.77.1", port) is (not guard)
        grpc = net.switches["w0"].cfg.grpc_port
        assert not _connects(outside_netns, "169.254.77.1", grpc)       # gRPC is bound to 127.0.0.1


def test_watcher_repushes_after_an_unannounced_restart():
    fabric = parse_spec("bcube:n=2,k=1")
    with FabricNetwork(fabric, NetOptions(watch=True)) as net:
        sw = net.switches["v2"]
        sw.signal(9)
        sw.proc.wait()
        sw.start()                      # nobody tells the controller
        deadline = time.monotonic() + 20
        entries = []
        while time.monotonic() < deadline:
            try:
                entries = net.controller.read_table("v2", "DcnIngress.fwd.ipv4_host")
            except Exception:           # stream not back yet
                entries = []
            if len(entries) == 4:
                break
            time.sleep(0.2)
        assert len(entries) == 4
        assert all(len(v) == 3 for v in net.reachability().values())


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
