"""``dcnlab ptf`` without BMv2: the PTF command line dcnlab builds, the bad inputs refused in one line before
anything is created, and the launcher that gives p4lang's PTF tests their ``p4.*`` modules from finsy's.
The runs against BMv2 are in ``tests/test_ptf_bmv2.py``."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from dcnlab.cli import main
from dcnlab.emu import ptf as eptf

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "ptf-router"
ROUTER = ROOT / "examples" / "programs" / "router.p4"


def test_test_params_are_dcnlabs_then_the_users(tmp_path):
    s = eptf.test_params({"grpcaddr": "unix:/r/sw0.sock", "device_id": 0, "p4info": tmp_path / "a b.txtpb"},
                         "grpcaddr='x';extra=3")
    assert s == f"grpcaddr='unix:/r/sw0.sock';device_id=0;p4info='{tmp_path}/a b.txtpb';grpcaddr='x';extra=3"
    ns: dict = {}
    exec("class P:\n    " + s, ns)                    # how PTF reads them (test_params_parse)
    assert (ns["P"].grpcaddr, ns["P"].device_id, ns["P"].extra) == ("x", 0, 3)


def test_ptf_argv_sets_ports_log_and_timeout_unless_given(tmp_path):
    argv = eptf.ptf_argv(Path("/v/bin/ptf"), tmp_path, {1: "ptf1", 0: "ptf0"}, "a=1", ["T.One"], tmp_path / "run")
    assert argv[:5] == [sys.executable, "-m", "dcnlab.emu.ptf_launch", "/v/bin/ptf", "--test-dir"]
    assert argv[6:] == ["-i", "0@ptf0", "-i", "1@ptf1", "--test-params", "a=1", "--log-file",
                        str(tmp_path / "run" / "ptf.log"), "--test-case-timeout", "300", "T.One"]
    argv = eptf.ptf_argv(Path("ptf"), tmp_path, {0: "ptf0"}, "a=1", ["--log-dir", "d", "--test-case-timeout=5"],
                         tmp_path)
    assert "--log-file" not in argv and argv.count("--test-case-timeout=5") == 1 and "300" not in argv


@pytest.mark.parametrize("flag", ["-i", "--interface=0@eth0", "--test-dir", "--platform", "-t", "--test-params=x"])
def test_options_dcnlab_sets_are_refused(flag):
    with pytest.raises(eptf.UserError, match=r"PTF option .* is set by dcnlab"):
        eptf.check_passthrough(["--failfast", flag])


def test_ports_range():
    assert eptf.check_ports(1) == 1 and eptf.check_ports(511) == 511
    for bad in (0, 512, -1, True, "8", 2.0):
        with pytest.raises(eptf.UserError, match=r"valid: 1 to 511 \(BMv2 binds at most 512"):
            eptf.check_ports(bad)


def _one_line(capsys, argv: list[str]) -> str:
    try:
        rc = main(argv)
    except SystemExit as e:                           # argparse's own errors (dcnlab's Parser: one line)
        rc = e.code
    assert rc == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err
    return err


def test_without_ptf_one_line_says_how_to_get_it(capsys, monkeypatch, tmp_path):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ptf" else real(name, *a))
    monkeypatch.setenv("DCNLAB_RUN_ROOT", str(tmp_path / "runs"))
    for argv in (["ptf", str(EXAMPLE)], ["lab", str(ROOT / "examples" / "basic-lab"), "--ptf", "s1",
                                         "--tests", str(EXAMPLE / "ptf")]):
        err = _one_line(capsys, argv)
        assert "PTF is not installed" in err and "pip install 'dcnlab[ptf]'" in err
    assert not (tmp_path / "runs").exists() and not (EXAMPLE / "build").exists()


@pytest.mark.parametrize("argv, said", [
    (["ptf"], "give an exercise directory DIR"),
    (["ptf", "--program", str(ROUTER)], "give an exercise directory DIR"),
    (["ptf", "/no/such/dir"], "directory '/no/such/dir' does not exist"),
    (["ptf", str(ROOT / "examples" / "basic-lab")], "has no ptf/ directory of tests; give one with --tests DIR"),
    (["ptf", "--program", str(ROUTER), "--tests", str(ROOT / "examples" / "programs")], "holds no PTF tests"),
    (["ptf", "--program", str(ROUTER), "--tests", "/no/such/dir"], "--tests '/no/such/dir' does not exist"),
    (["ptf", "--program", str(ROOT / "README.md"), "--tests", str(EXAMPLE / "ptf")], "valid: an existing P4 source"),
    (["ptf", str(EXAMPLE), "--ports", "512"], "argument --ports: 512 is out of range; valid: 1..511"),
    (["ptf", str(EXAMPLE), "-t", "a=1;b=("], "argument --test-params: 'a=1;b=(' is not PTF's test parameters"),
    (["lab", str(ROOT / "examples" / "basic-lab"), "--ptf", "s1", "--tests", str(EXAMPLE / "ptf"),
      "--ptf-args", "'x"], "argument --ptf-args: \"'x\" cannot be split into words"),
    (["ptf", str(EXAMPLE), "--", "--interface", "0@eth0"], "PTF option --interface is set by dcnlab"),
    (["lab", str(ROOT / "examples" / "basic-lab"), "--ptf", "s9"], "'s9' is not a switch of pod-topo/topology.json"),
    (["lab", str(ROOT / "examples" / "basic-lab"), "--ptf", "s1"], "has no ptf/ directory of tests"),
    (["lab", str(ROOT / "examples" / "basic-lab"), "--keep-pipeline"], "argument --keep-pipeline: only with --ptf"),
    (["lab", str(ROOT / "examples" / "basic-lab"), "--ptf", "s1", "--tests", str(EXAMPLE / "ptf"),
      "--ptf-args", "--test-dir x"], "PTF option --test-dir is set by dcnlab"),
])
def test_bad_input_is_one_line_before_anything_is_made(argv, said, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("DCNLAB_RUN_ROOT", str(tmp_path / "runs"))
    assert said in _one_line(capsys, argv)
    assert not (tmp_path / "runs").exists() and not (EXAMPLE / "build").exists()


LAUNCHED = """
import sys
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc
from p4.config.v1 import p4info_pb2
from p4.tmp import p4config_pb2
from google.rpc import code_pb2, status_pb2
import google.protobuf.text_format
import finsy.proto.p4.v1.p4runtime_pb2 as finsy_p4rt
import ptf
assert ptf.__file__ is not None and "site-packages" in ptf.__file__, ptf.__path__      # not ./ptf, the tests
c = p4config_pb2.P4DeviceConfig(reassign=True, device_data=b"{}")
c.extras.kv["k"] = "v"
assert p4runtime_pb2.ForwardingPipelineConfig is finsy_p4rt.ForwardingPipelineConfig
print(sys.argv[1:], sys.path[0], c.SerializeToString().hex(), code_pb2.UNKNOWN, p4info_pb2.P4Info.__name__)
"""


def test_launcher_gives_the_tutorials_modules_from_finsys(tmp_path):
    """p4lang's tests import p4.v1, p4.config.v1, p4.tmp and google.rpc (PyPI's p4runtime); the launcher makes
    them finsy's own classes, and builds P4DeviceConfig with PI's field numbers."""
    if importlib.util.find_spec("p4") is not None:
        pytest.skip("a p4 package is installed here: the launcher leaves it as it is")
    script = tmp_path / "bin" / "fake_ptf"
    script.parent.mkdir()
    script.write_text(LAUNCHED)
    (tmp_path / "ptf").mkdir()                        # run, as PTF runs, in an exercise directory: it has ptf/
    (tmp_path / "ptf" / "basic_fwd.py").write_text("")
    r = subprocess.run([sys.executable, "-m", "dcnlab.emu.ptf_launch", str(script), "--a", "b"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0, r.stderr
    # reassign=1 (08 01), extras=2 {kv=1 {key=1 "k", value=2 "v"}} (12 08 0a 06 0a 01 6b 12 01 76), device_data=3
    assert r.stdout.split() == ["['--a',", "'b']", str(script.parent), "080112080a060a016b1201761a027b7d", "2",
                                "P4Info"]


SETTLING = """
import sys, threading, time, unittest
from dcnlab.emu import ptf_launch
if sys.argv[1] == "settle":
    ptf_launch.settle_between_tests(limit_s=0.5)
joined = []
join = ptf_launch._join
ptf_launch._join = lambda threads, *a: (joined.append(sorted(t.name for t in threads)), join(threads, *a))
done, leak = [], threading.Event()

class Tutorial(unittest.TestCase):
    def test_1_closes_its_stream(self):       # the reader ends once the server has closed the old stream
        threading.Thread(target=lambda: (time.sleep(0.3), done.append("reader")), name="reader", daemon=True).start()

    def test_2_arbitrates_again(self):
        self.assertEqual(done, ["reader"])

    def test_3_leaves_a_sniffer(self):
        threading.Thread(target=leak.wait, name="sniffer", daemon=True).start()

    def test_4_after_it(self):
        pass

unittest.main(argv=["t"], exit=False, verbosity=0)
print(joined)
"""


@pytest.mark.parametrize("mode", ["settle", "plain"])
def test_the_launcher_waits_for_a_tests_threads_before_the_next_test(tmp_path, mode):
    """The tutorials' tests close their P4Runtime stream and return, and the next test's arbitration could meet
    the old connection ("Election id already exists", then a hang until PTF's timeout): the launcher waits
    for the threads a test started (their stream readers) before the next test, and a thread that outlives
    one wait (a sniffer) is not waited for again. Without the wait the second test runs too early."""
    script = tmp_path / "settling.py"
    script.write_text(SETTLING)
    r = subprocess.run([sys.executable, str(script), mode], capture_output=True, text=True, timeout=120, check=False)
    if mode == "plain":
        assert "FAILED (failures=1)" in r.stderr and "test_2_arbitrates_again" in r.stderr
        return
    assert "OK" in r.stderr.splitlines()[-1], r.stderr
    assert r.stdout.split("\n")[0] == "[['reader'], [], ['sniffer'], []]"


@pytest.mark.netns
def test_the_fixtures_dataplane_sends_and_expects_inside_a_namespace_of_its_own():
    """PtfSwitch's dataplane without BMv2: PTF's packet sockets opened inside a namespace by a thread that enters
    it, over one veth pair as the wire (port 0 on one end, port 1 on the other); the test's own thread stays in
    the machine's namespace, and PTF's globals are restored when it stops."""
    import os

    import ptf
    import ptf.testutils as tu

    from dcnlab.emu import links, netns
    from dcnlab.emu.ptf_switch import PtfSwitch

    ns = f"dcnlab-ptftest-{os.getpid()}"

    class Wire:                                       # stands for the PtfBench (no switch)
        netns, port_map, stopped = ns, {0: "w0", 1: "w1"}, False

        def stop(self):
            Wire.stopped = True

    before = os.readlink("/proc/thread-self/ns/net")
    saved = dict(ptf.config)
    netns.create(ns)
    try:
        links.create(ns, [links.VethPair("w0", "w1")])
        sw = PtfSwitch(ROUTER, ports=2, negative_timeout=0.2)
        sw.bench = Wire()                             # type: ignore[assignment]
        sw._open_dataplane()
        assert os.readlink("/proc/thread-self/ns/net") == before
        pkt = tu.simple_udp_packet(ip_dst="10.0.2.7")
        sw.send(0, pkt)
        sw.expect(pkt, [1])
        sw.expect_nothing()
        sw.send(1, pkt)                               # comes out of port 0: "nowhere else" fails
        with pytest.raises(AssertionError, match="Received packet that we expected not to receive on device 0, "
                                                 "port 0"):
            sw.expect(pkt, [1])
        sw.stop()
        assert Wire.stopped and dict(ptf.config) == saved and sw.dataplane is None
    finally:
        netns.delete(ns)
