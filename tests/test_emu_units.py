"""Emulation building blocks that need no BMv2: argv, shaping, guard rules, run records, clean."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from emu import bmv2, guard, links
from emu.cleanup import clean
from emu.network import FabricNetwork, NetOptions
from emu.rundir import RunDir, all_runs
from experiments.errors import UserError
from topos import parse_spec


def test_bmv2_argv_binds_grpc_to_loopback(tmp_path):
    cfg = bmv2.BMv2Config("e0_0", 7, {0: "e0_0-eth0", 2: "e0_0-eth2"}, 50058, 9097, tmp_path)
    argv = cfg.argv(Path("/x/simple_switch_grpc"))
    assert argv[:3] == ["/x/simple_switch_grpc", "--device-id", "7"]
    assert "0@e0_0-eth0" in argv and "2@e0_0-eth2" in argv
    assert argv[argv.index("--thrift-port") + 1] == "9097"
    assert argv[-4:] == ["--no-p4", "--", "--grpc-server-addr", "127.0.0.1:50058"]
    assert not any(a.startswith("--notifications") for a in argv)
    assert "--log-file" not in argv and "--pcap" not in argv
    cfg2 = bmv2.BMv2Config("s", 0, {}, 1, 2, tmp_path, log_level="debug", pcap=True)
    argv2 = cfg2.argv(Path("ss"))
    assert argv2[argv2.index("-L") + 1] == "debug" and argv2[argv2.index("--pcap") + 1] == str(tmp_path / "pcap")


def test_wait_ready_reports_a_dead_switch_with_its_log(tmp_path):
    cfg = bmv2.BMv2Config("w3", 0, {}, 1, 2, tmp_path)
    cfg.out_file.write_text("line 1\nerror: could not bind\n")
    sw = bmv2.BMv2Process(cfg)
    sw.proc = subprocess.Popen(["false"])
    sw.proc.wait()
    with pytest.raises(bmv2.SwitchStartError, match=r"(?s)w3 exited with status 1.*could not bind"):
        bmv2.wait_ready([sw], timeout=2)


def test_wait_ready_times_out_naming_the_switch(tmp_path):
    port = bmv2.free_ports(1, 40123, "127.0.0.1")[0]
    sw = bmv2.BMv2Process(bmv2.BMv2Config("slow", 0, {}, port, 2, tmp_path))
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


def test_interface_names_are_checked():
    with pytest.raises(links.LinkSetupError, match="longer than 15"):
        links.check_names(["h123_123_123-eth0"])
    with pytest.raises(links.LinkSetupError, match="already exists"):
        links.check_names(["lo"])


def test_guard_rule_drops_non_loopback_tcp():
    r = guard.rule([9092, 9090, 9091], "run42")
    assert r == ["INPUT", "-p", "tcp", "--dport", "9090:9092", "!", "-i", "lo", "-m", "comment",
                 "--comment", "dcnlab:run42", "-j", "DROP"]


def test_emulation_size_limit_is_a_clear_error():
    with pytest.raises(UserError, match="max_switches=160"):
        FabricNetwork(parse_spec("fattree:k=16"), NetOptions())


def _spawn(name: str) -> subprocess.Popen:
    return subprocess.Popen(["sleep", "60"], start_new_session=True)


def test_clean_kills_only_recorded_matching_processes(tmp_path, monkeypatch):
    monkeypatch.setenv("DCNLAB_RUN_ROOT", str(tmp_path))
    recorded, unrelated, reused = _spawn("a"), _spawn("b"), _spawn("c")
    try:
        run = RunDir.create("bcube:n=2,k=1")
        run.record_process("switch:v0", recorded.pid, "sleep")
        run.record_process("switch:v1", reused.pid, "simple_switch_grpc")  # pid reused by another program
        run.state.owner_pid = 999999999  # owner gone: a crashed run
        run.save()
        report = clean()
        assert report.runs == [run.path.name] and report.killed == 1
        assert recorded.wait(timeout=5) is not None
        assert unrelated.poll() is None and reused.poll() is None
        assert all(r.state.finished for r in all_runs())
        assert clean().runs == []  # idempotent
    finally:
        for p in (recorded, unrelated, reused):
            p.kill()
            p.wait()


def test_clean_skips_live_runs_unless_forced(tmp_path, monkeypatch):
    monkeypatch.setenv("DCNLAB_RUN_ROOT", str(tmp_path))
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
        assert p.wait(timeout=5) is not None
    finally:
        for q in (p, owner):
            q.kill()
            q.wait()


def test_cli_clean_output(tmp_path):
    env = dict(os.environ, DCNLAB_RUN_ROOT=str(tmp_path))
    r = subprocess.run([sys.executable, "-m", "experiments", "clean"], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and r.stdout.startswith("cleaned 0 run(s)")
