"""A controller that is not dcnlab's: examples/finsy-controller/controller.py, a finsy
script, becomes primary on the switches of a running network whose own controller stepped down,
installs the routes, and the hosts then reach each other (ping and all-pairs UDP probes)."""

from __future__ import annotations

import dataclasses
import logging
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dcnlab.emu.cleanup import leftovers
from dcnlab.emu.network import FabricNetwork, NetOptions
from dcnlab.p4src.compiler import compile_program
from dcnlab.topos.files import load_topology

pytestmark = pytest.mark.bmv2

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "finsy-controller"


def options() -> NetOptions:
    """No dcnlab controller: ``controller=False`` where NetOptions has it (dcnlab pushes the pipeline,
    then steps down); the test steps down itself as well, which is then a no-op."""
    has = "controller" in {f.name for f in dataclasses.fields(NetOptions)}
    return NetOptions(agents=False, routes=False, **({"controller": False} if has else {}))


def test_a_finsy_controller_takes_the_switches_and_carries_traffic(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("DCNLAB_RUN_ROOT", str(tmp_path / "runs"))
    caplog.set_level(logging.INFO, logger="dcnlab.controller.runtime")
    fabric = load_topology(EXAMPLE / "topology.json")
    t0 = time.monotonic()
    with FabricNetwork(fabric, options()) as net:
        up = time.monotonic() - t0
        net.controller.step_down()
        assert net.controller.handed_over() == ["s1", "s2"]
        assert net.program is not None
        assert [len(net.controller.read_table(s, "RIngress.routes")) for s in ("s1", "s2")] == [0, 0]
        prog = compile_program(net.program.stem, src_dir=net.program.parent)   # the cached build
        cmd = [sys.executable, str(EXAMPLE / "controller.py"), "--p4info", str(prog.p4info), "--p4blob", str(prog.json)]
        cmd += [f"{n}@{sw.cfg.device_id}={sw.cfg.grpc_addr}" for n, sw in net.switches.items()]
        t1 = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 120     # a hang guard: the controller starts and writes in seconds
            while True:      # dcnlab still reads the switches it handed over
                n = {s: len(net.controller.read_table(s, "RIngress.routes")) for s in ("s1", "s2")}
                if n == {"s1": 3, "s2": 3}:
                    break
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, f"routes not installed: {n}"
                time.sleep(0.1)
            routed = time.monotonic() - t1
            for src, dst in (("h1", "10.0.3.3"), ("h2", "10.0.1.1"), ("h3", "10.0.2.2")):
                out = net.hosts[src].cmd(f"ping -c 2 -W 5 -i 0.2 {dst}")     # -W: a reply may be slow, not lost
                assert " 0% packet loss" in out, out
            reach = net.reachability()
            assert reach.unreachable == [] and reach.complete, reach.summary()
            assert net.controller.lost_primary() == []
            print(f"network up {up:.2f} s; finsy controller primary with routes in {routed:.2f} s; {reach.summary()}")
        finally:
            proc.send_signal(signal.SIGTERM)
            out, err = proc.communicate(timeout=60)
    assert "s1: 3 routes installed" in out and "s2: 3 routes installed" in out, out + err
    assert err.count("Channel ready (is_primary=True") == 2, err
    # dcnlab handed the switches over: it says so once, and warns about nothing
    assert [r.getMessage() for r in caplog.records if "stepped down" in r.getMessage()] == [
        "dcnlab stepped down on 2 switch(es) (s1, s2); another controller may become primary"]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], [r.getMessage() for r in caplog.records]
    assert not leftovers(tmp_path / "runs")
