"""``dcnlab lab DIR`` on BMv2: examples/basic-lab, an exercise-like directory written for
dcnlab (Makefile ``TOPO = pod-topo/topology.json``, basic.p4 at its root, runtime JSON per switch, host
commands, send.py/receive.py and a plain-gRPC controller.py), brought up as the tutorials' ``make run``
would, in a copy (the lab writes build/ into its directory)."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import interrupts
import ports

from dcnlab.emu.cleanup import leftovers
from dcnlab.cli import main

BASIC = Path(__file__).resolve().parent.parent / "examples" / "basic-lab"


@pytest.fixture
def lab(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("DCNLAB_RUN_ROOT", str(tmp_path / "runs"))
    d = tmp_path / "basic-lab"
    shutil.copytree(BASIC, d, ignore=shutil.ignore_patterns("build", "logs", "received.txt"))
    return d


def _dcnlab(*argv: str, **kw) -> subprocess.Popen:
    """``dcnlab ARGV`` as a terminal's foreground job: SIGINT live even when pytest runs in the background
    (``tests/interrupts.py``; without it the Ctrl-C test hung whenever pytest ignored SIGINT)."""
    return interrupts.popen(*argv, **kw)


@pytest.mark.bmv2
def test_lab_execs_carry_packets_and_build_is_where_the_exercise_looks(lab, capsys):
    argv = ["lab", str(lab),
            "--exec", "h4 python3 receive.py --count 1 --log received.txt &",
            "--exec", "h1 python3 send.py 10.0.4.4 hello",
            "--exec", "h1 ping -c 2 -W 1 -i 0.2 10.0.3.3",
            "--exec", "h2 pwd; ip -br link show dev eth0"]
    assert main(argv) == 0, capsys.readouterr()
    out, err = capsys.readouterr()
    for header in ("== h4 (background): python3 receive.py --count 1 --log received.txt",
                   "== h1: python3 send.py 10.0.4.4 hello", "== h1: ping -c 2 -W 1 -i 0.2 10.0.3.3"):
        assert header in out
    assert "sent 'hello' to 10.0.4.4:4321: 'ack hello'" in out
    assert "2 packets transmitted, 2 received" in out and "ttl=61" in out     # h1 -> s1, s2, s3 -> h3
    assert f"== h2: pwd; ip -br link show dev eth0\n{lab}\neth0" in out       # DIR, eth0 with the file's MAC
    assert "08:00:00:00:02:02" in out.split("== h2:")[1]
    assert "got 'hello' from 10.0.1.1 (ttl 62, 2 switch hop(s))" in (lab / "received.txt").read_text()
    assert "== h4 (background): python3 receive.py --count 1 --log received.txt: exit status 0" in out
    assert "4 BMv2 switches, 4 hosts, up in " in out and "torn down" in err
    p4info = (lab / "build" / "basic.p4.p4info.txtpb").read_text()
    assert 'name: "LabIngress.ipv4_lpm"' in p4info
    assert json.loads((lab / "build" / "basic.json").read_text())["pipelines"]
    assert (lab / "logs").is_dir()                      # where an exercise's controller writes its dump
    assert not leftovers()


@pytest.mark.bmv2
def test_a_failing_exec_fails_the_lab_and_the_rest_still_runs(lab, capsys):
    """No route to 10.0.9.9 (basic.p4 drops a miss): exit status 1, the next commands still run. A command
    whose shell leaves a process behind that holds the output open is over when its shell exits; the
    process is ended at teardown."""
    t = time.monotonic()
    rc = main(["lab", str(lab), "--exec", "h1 ping -c 1 -W 1 10.0.9.9", "--exec", "h3 sleep 600 & echo started",
               "--exec", "h2 echo still here"])
    out, err = capsys.readouterr()
    # a hang guard, not a benchmark: the lab takes seconds; waiting for the background sleep would take 600
    assert rc == 1 and time.monotonic() - t < 300
    assert "== h1: exit status 1: ping -c 1 -W 1 10.0.9.9" in out
    assert "== h3: sleep 600 & echo started\nstarted\n== h2: echo still here\nstill here\n" in out
    assert "dcnlab lab: 1 of 3 foreground command(s) failed: h1: ping -c 1 -W 1 10.0.9.9 (exit status 1)" in err
    assert not leftovers()


@pytest.mark.bmv2
def test_a_program_that_does_not_compile_is_p4cs_message(lab, capsys):
    (lab / "basic.p4").write_text((lab / "basic.p4").read_text().replace("h.ip.ttl - 1", "h.ip.ttl - oops"))
    assert main(["lab", str(lab), "--exec", "h1 true"]) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err and "basic.p4(" in lines[0] and "oops" in lines[0], err
    assert not (lab / "build").exists() and not list((lab.parent / "runs").glob("*"))


@pytest.mark.bmv2
def test_the_labs_own_controller_over_grpc_tcp(lab):
    """The p4runtime exercise's way: switches on 127.0.0.1:50051.. (device ids 0.. in file order), dcnlab
    stepped down, no entries until the lab's controller.py (plain gRPC, run from the root namespace as the
    tutorials run mycontroller.py) pushes the pipeline from build/ and writes its routes."""
    topo = lab / "pod-topo" / "topology.json"
    data = json.loads(topo.read_text())
    for sw in data["switches"].values():
        sw.pop("runtime_json")
    topo.write_text(json.dumps(data))
    # the tutorials' 50051.. unless another run on this machine holds them (a second suite did: "Address
    # already in use"); the lab's controller.py takes the first port as --port
    base = ports.free_block(4)
    p = _dcnlab("lab", str(lab), "--grpc-tcp", str(base), "--no-controller",
                "--exec", "h1 ! ping -c 1 -W 1 10.0.3.3",                    # no routes yet
                "--exec", "h1 timeout 60 sh -c 'until [ -e controller.done ]; do sleep 0.05; done'",
                "--exec", "h1 ping -c 2 -W 1 -i 0.2 10.0.3.3",
                "--exec", "h4 ping -c 2 -W 1 -i 0.2 10.0.2.2")
    assert p.stdout is not None
    seen = []
    try:
        for line in p.stdout:
            seen.append(line)
            if line.startswith("== h1: timeout 60"):      # the first check is done: no traffic without routes
                break
        else:
            pytest.fail("".join(seen) + p.communicate()[1])
        text = "".join(seen)
        for i, sw in enumerate(("s1", "s2", "s3", "s4")):
            assert f"{sw:<10} device_id {i:<3} 127.0.0.1:{base + i}" in text
        ctl = subprocess.run([sys.executable, "controller.py", "--port", str(base)], cwd=lab, capture_output=True,
                             text=True, timeout=60)
        (lab / "controller.done").touch()
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert ctl.returncode == 0, ctl.stdout + ctl.stderr
    assert "s4 (device 3, 127.0.0.1:50054): pipeline pushed, 4 routes in LabIngress.ipv4_lpm" in ctl.stdout
    assert p.returncode == 0, text + out + err
    assert out.count("2 packets transmitted, 2 received") == 2
    assert not leftovers()


@pytest.mark.bmv2
def test_ctrl_c_during_an_exec_tears_everything_down(lab):
    p = _dcnlab("lab", str(lab), "--exec", "h2 sleep 600 &", "--exec", "h1 sleep 600")
    assert p.stdout is not None
    for line in p.stdout:
        if line.startswith("== h1: sleep 600"):
            break
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130 and "dcnlab: interrupted" in err and "torn down" in err, err
    assert "== h2 (background): sleep 600: stopped at teardown" in out
    assert not leftovers()


@pytest.mark.bmv2
def test_bench_emu_times_the_lab(lab, capsys):
    assert main(["bench", "emu", "--lab", str(lab)]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("lab:basic-lab"))
    fields = row.split()
    assert fields[1] == "4" and fields[6] == "12/12", row
    assert float(fields[2]) > 0                        # a measurement, reported by the bench, never judged here
    assert "P4Runtime writes" not in out
    assert not leftovers()
