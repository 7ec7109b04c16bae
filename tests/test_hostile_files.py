"""Hostile user files: topology files, the files they refer to, lab directories
and groups files that are not regular files, loop, hold control characters, huge numbers, unsafe names,
BMv2's reserved ports or addresses no host can have.

Every case builds its files in a fresh directory (the fixtures are generated, none is checked in), runs
``dcnlab`` in this process, and requires exit status 2, one line on stderr that names the file (or its
element) and the problem, no traceback, no raw control character anywhere in the output, a short line,
and nothing started: the emulation, the compiler and the preflight are replaced by sentinels, so a case
that got past the checks fails here instead of doing work. Every case runs under a CPU-time guard
(:data:`HANG_GUARD`, far beyond the fraction of a second a case takes, and not moved by a busy machine); a
case blocked without computing (a FIFO that blocked the reader) is caught by pytest-timeout instead.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from dcnlab.cli import main

HANG_GUARD = 120
"""CPU seconds before a case counts as hung (each takes well under one)."""
MAX_LINE = 700
"""Characters of the one error line (two full paths and what is valid fit; a file's content does not)."""
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""Characters no message may print raw (C0 but newline and tab, DEL, C1, bidirectional overrides)."""

TUTORIAL = {"hosts": {"h1": {"ip": "10.0.1.1/24", "mac": "08:00:00:00:01:11"},
                      "h2": {"ip": "10.0.2.2/24", "mac": "08:00:00:00:02:22"}},
            "switches": {"s1": {}, "s2": {}},
            "links": [["h1", "s1-p1"], ["h2", "s2-p1"], ["s1-p2", "s2-p2"]]}
P4APP = {"p4_src": "prog.p4", "topology": {"assignment_strategy": "l3", "links": [["h1", "s1"], ["h2", "s1"]],
                                           "hosts": {"h1": {}, "h2": {}}, "switches": {"s1": {}}}}


def dcnlab_json() -> dict:
    """dcnlab's own format: two hosts on one switch, addresses given."""
    return {"kind": "custom", "params": {},
            "nodes": [{"name": "s1", "role": "switch", "ports": 3}, {"name": "h1", "role": "host", "ports": 1},
                      {"name": "h2", "role": "host", "ports": 1}],
            "links": [{"a": "h1", "a_port": 0, "b": "s1", "b_port": 1},
                      {"a": "h2", "a_port": 0, "b": "s1", "b_port": 2}],
            "hosts": [{"name": "h1", "ip": "10.0.1.1", "mac": "02:00:00:00:00:01", "prefix_len": 16},
                      {"name": "h2", "ip": "10.0.1.2", "mac": "02:00:00:00:00:02", "prefix_len": 16}]}


def _copy(x: dict) -> dict:
    return json.loads(json.dumps(x))


def put(d: Path, name: str, data: object) -> Path:
    p = d / name
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        p.write_bytes(data)
    else:
        p.write_text(data if isinstance(data, str) else json.dumps(data))
    return p


def fifo(d: Path, name: str) -> Path:
    p = d / name
    p.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(p)
    return p


def loop(d: Path, name: str) -> Path:
    """A symbolic link that points at itself through a second one."""
    p, q = d / name, d / f"{name}.other"
    os.symlink(q.name, p)
    os.symlink(p.name, q)
    return p


def tutorial(d: Path, **switch_s1: object) -> Path:
    t = _copy(TUTORIAL)
    t["switches"]["s1"] = dict(switch_s1)
    return put(d, "topology.json", t)


def with_program(d: Path, data: dict) -> Path:
    """A dcnlab-format file whose switch runs prog.p4 (so the file reaches every other check)."""
    put(d, "prog.p4", "// a program\n")
    data.setdefault("nodes")[0]["program"] = "prog.p4"
    return put(d, "topology.json", data)


def dcn(d: Path, change: Callable[[dict], object]) -> list[str]:
    data = dcnlab_json()
    change(data)
    return ["run", str(with_program(d, data))]


def rename(data: dict, old: str, new: str) -> None:
    """Rename node ``old`` of a dcnlab-format file everywhere."""
    for n in data["nodes"]:
        n["name"] = new if n["name"] == old else n["name"]
    for l in data["links"]:
        for k in ("a", "b"):
            l[k] = new if l[k] == old else l[k]
    for h in data["hosts"]:
        h["name"] = new if h["name"] == old else h["name"]


def host(data: dict, i: int, **change: object) -> None:
    data["hosts"][i].update(change)


def tut_host(d: Path, **h1: object) -> list[str]:
    t = _copy(TUTORIAL)
    t["hosts"]["h1"] = dict(h1)
    put(d, "prog.p4", "// a program\n")
    t["switches"] = {"s1": {"program": "prog.p4"}, "s2": {"program": "prog.p4"}}
    return ["run", str(put(d, "topology.json", t))]


def lab_dir(d: Path) -> Path:
    lab = d / "lab"
    shutil.copytree(EXAMPLES / "basic-lab", lab, ignore=shutil.ignore_patterns("build", "logs", "received.txt"))
    return lab


def lab_with(d: Path, makefile: str | bytes) -> list[str]:
    lab = lab_dir(d)
    put(lab, "Makefile", makefile)
    return ["lab", str(lab), "--exec", "h1 true"]


def lab_spoiled(d: Path, spoil: Callable[[Path], object]) -> list[str]:
    lab = lab_dir(d)
    spoil(lab)
    return ["lab", str(lab), "--exec", "h1 true"]


def _replace(p: Path, make: Callable[[Path, str], object]) -> None:
    p.unlink()
    make(p.parent, p.name)


@dataclass(frozen=True)
class Case:
    id: str
    build: Callable[[Path], list[str]]
    """Makes the files in a fresh directory; returns the command line."""
    words: tuple[str, ...]
    """What the error line must say (the file or element, and the problem)."""


CASES = [
    # 10: not a regular file, before it is opened
    Case("topology-fifo", lambda d: ["run", str(fifo(d, "topo.json"))], ("topo.json", "is not a regular file (a FIFO)")),
    Case("topology-fifo-no-suffix", lambda d: ["run", str(fifo(d, "topo"))], ("topo'", "a FIFO")),
    Case("topology-directory", lambda d: ["run", str((d / "t.json").mkdir() or d / "t.json")], ("t.json", "is a directory")),
    Case("topology-symlink-loop", lambda d: ["run", str(loop(d, "t.json"))], ("t.json", "symlink loop")),
    Case("topology-dev-zero", lambda d: ["run", "/dev/zero"], ("/dev/zero", "not a regular file (a character device)")),
    Case("topology-missing", lambda d: ["run", str(d / "none.json")], ("none.json", "does not exist")),
    Case("topology-fifo-bare-name", lambda d: (fifo(d.parent / "cwd", "topo"), ["run", "topo"])[1],
         ("cwd/topo'", "a FIFO")),
    Case("topology-symlink-to-dev-zero", lambda d: (os.symlink("/dev/zero", d / "z.json"), ["run", str(d / "z.json")])[1],
         ("z.json", "a character device")),
    Case("topology-empty", lambda d: ["run", str(put(d, "t.json", ""))], ("t.json", "invalid JSON")),
    Case("topology-not-utf8", lambda d: ["run", str(put(d, "t.json", b'{"nodes": "\xff\xfe"}'))], ("t.json", "not UTF-8")),
    Case("topology-nan-bandwidth", lambda d: dcn(d, lambda x: x["links"][0].update(bw=float("nan"))),
         ("bandwidth", "NaN is not a number")),
    Case("runtime-json-dev-zero", lambda d: ["run", str(tutorial(d, runtime_json="/dev/zero"))],
         ("switch s1 runtime_json", "/dev/zero is not a regular file (a character device)")),
    Case("lab-makefile-symlink-loop", lambda d: lab_spoiled(d, lambda lab: _replace(lab / "Makefile", loop)),
         ("Makefile", "symlink loop")),
    Case("lab-topology-directory", lambda d: lab_spoiled(d, lambda lab: (
        (lab / "pod-topo" / "topology.json").unlink(), (lab / "pod-topo" / "topology.json").mkdir())),
         ("no topology", "topology.json is a directory")),
    Case("p4app-manual-network-address", lambda d: (put(d, "prog.p4", "//\n"), ["run", str(put(d, "p4app.json", {
        **P4APP, "topology": {**P4APP["topology"], "assignment_strategy": "manual",
                              "hosts": {"h1": {"ip": "10.0.0.0/8"}, "h2": {"ip": "10.0.0.2/8"}}}}))])[1],
         ("host h1 ip", "network address of 10.0.0.0/8")),
    Case("p4app-gateway-outside-subnet", lambda d: (put(d, "prog.p4", "//\n"), ["run", str(put(d, "p4app.json", {
        **P4APP, "topology": {**P4APP["topology"], "assignment_strategy": "manual",
                              "hosts": {"h1": {"ip": "10.0.1.1/24", "gw": "10.0.2.1"}, "h2": {"ip": "10.0.1.2/24"}}}}))])[1],
         ("host h1 gateway", "outside the host's subnet 10.0.1.0/24")),
    Case("topology-home-of-no-user", lambda d: ["run", "~no_such_user_24/t.json"], ("t.json", "does not exist")),
    Case("runtime-json-fifo", lambda d: (fifo(d, "s1.json"), ["run", str(tutorial(d, runtime_json="s1.json"))])[1],
         ("switch s1 runtime_json", "s1.json is not a regular file (a FIFO)")),
    Case("cli-input-fifo", lambda d: (fifo(d, "s1.txt"), ["run", str(tutorial(d, cli_input="s1.txt"))])[1],
         ("switch s1 cli_input", "s1.txt is not a regular file (a FIFO)")),
    Case("program-fifo", lambda d: (fifo(d, "prog.p4"), ["run", str(put(d, "p4app.json", P4APP))])[1],
         ("p4_src", "prog.p4 is not a regular file (a FIFO)")),
    Case("run-option-program-fifo", lambda d: ["run", "fattree:k=4", "--program", str(fifo(d, "x.p4"))],
         ("--program", "x.p4", "is not a regular file (a FIFO)")),
    Case("groups-file-fifo", lambda d: ["plan", "multicast", "--topo", "fattree:k=4", "--groups", str(fifo(d, "g.json"))],
         ("groups file", "g.json", "is not a regular file (a FIFO)")),
    Case("lab-makefile-fifo", lambda d: lab_spoiled(d, lambda lab: _replace(lab / "Makefile", fifo)),
         ("Makefile", "is not a regular file (a FIFO)")),
    Case("lab-topology-fifo", lambda d: lab_spoiled(d, lambda lab: _replace(lab / "pod-topo" / "topology.json", fifo)),
         ("topology.json", "is not a regular file (a FIFO)")),
    Case("lab-default-prog-fifo", lambda d: lab_spoiled(d, lambda lab: (
        (lab / "Makefile").write_text((lab / "Makefile").read_text() + "DEFAULT_PROG = f.p4\n"), fifo(lab, "f.p4"))),
         ("DEFAULT_PROG", "f.p4", "is not a regular file (a FIFO)")),
    Case("lab-dir-symlink-loop", lambda d: ["lab", str(loop(d, "lab"))], ("lab", "symlink loop")),
    # 11: a number Python refuses to convert, symlink loops, a fabric dcnlab cannot route
    Case("topology-5000-digits", lambda d: ["run", str(put(d, "t.json", '{"nodes": [], "links": [], "x": ' + "9" * 5000 + "}"))],
         ("t.json", "more than 4300 digits")),
    Case("groups-5000-digits", lambda d: ["plan", "multicast", "--topo", "fattree:k=4", "--groups",
                                          str(put(d, "g.json", '[{"mgid": ' + "9" * 5000 + ', "members": []}]'))],
         ("g.json", "more than 4300 digits")),
    Case("runtime-json-symlink-loop", lambda d: (loop(d, "s1.json"), ["run", str(tutorial(d, runtime_json="s1.json"))])[1],
         ("switch s1 runtime_json", "s1.json is a symlink loop")),
    Case("lab-runtime-json-symlink-loop", lambda d: lab_spoiled(d, lambda lab: _replace(lab / "pod-topo" / "s2-runtime.json", loop)),
         ("switch s2 runtime_json", "s2-runtime.json is a symlink loop")),
    Case("custom-fabric-without-program", lambda d: ["run", str(put(d, "t.json", dcnlab_json()))],
         ("t.json", "needs a program", "--program")),
    Case("tutorials-without-program", lambda d: ["run", str(put(d, "topology.json", TUTORIAL))],
         ("topology.json", "needs a program", "--program")),
    Case("builtin-kind-with-another-graph", lambda d: ["run", str(put(d, "t.json", {**dcnlab_json(), "kind": "fattree",
                                                                                  "params": {"k": 4}}))],
         ("t.json", "needs a program", "fattree:k=4")),
    # 12: control characters and long tokens are quoted escaped and cut short
    Case("ansi-node-name-tutorials", lambda d: ["run", str(put(d, "topology.json", {**TUTORIAL, "switches": {
        "\x1b[2J\x1b[Hs1": {}}}))], ("\\x1b[2J",)),
    Case("ansi-node-name-dcnlab", lambda d: dcn(d, lambda x: rename(x, "s1", "\x1b[2Js1")), ("\\x1b[2J", "node name")),
    Case("escape-in-topology-path", lambda d: ["run", str(put(d, "t\x1b[2J.json", "{,}"))], ("t\\x1b[2J.json", "invalid JSON")),
    Case("makefile-topo-nul", lambda d: lab_with(d, b"TOPO = pod-topo/\x00topology.json\n"), ("TOPO", "\\x00")),
    Case("makefile-topo-escape", lambda d: lab_with(d, b"TOPO = \x1b[2J/topology.json\n"), ("TOPO", "\\x1b[2J")),
    Case("long-node-name", lambda d: ["run", str(put(d, "topology.json", {**TUTORIAL, "switches": {"s" * 5000: {}}}))],
         ("node name", "(5000 characters)")),
    Case("long-unknown-key", lambda d: ["run", str(put(d, "topology.json", {**TUTORIAL, "k\x07" * 3000: 1}))],
         ("unknown key",)),
    Case("long-list-as-number", lambda d: dcn(d, lambda x: x["links"][0].update(bw=list(range(100_000)))),
         ("bandwidth", "is not a number")),
    # 13: the right reason, every path tried
    Case("runtime-json-directory", lambda d: ((d / "s1.json").mkdir(), ["run", str(tutorial(d, runtime_json="s1.json"))])[1],
         ("switch s1 runtime_json", "s1.json is a directory")),
    Case("relative-reference-names-both-paths", lambda d: ["run", str(tutorial(d / "sub", runtime_json="s1.json"))],
         ("switch s1 runtime_json", "cwd/s1.json does not exist", "sub/s1.json does not exist")),
    Case("empty-node-name", lambda d: dcn(d, lambda x: rename(x, "h1", "")), ("name", "got an empty string")),
    Case("makefile-circular-variables", lambda d: lab_with(d, "A = $(B)/x\nB = $(A)/y\nTOPO = $(A)/topology.json\n"),
         ("TOPO", "circular")),
    Case("makefile-unset-variable", lambda d: lab_with(d, "TOPO = $(NOWHERE)/topology.json\n"),
         ("TOPO", "NOWHERE", "not set")),
    # 14: names, ports and addresses, checked by the reader
    Case("name-with-space", lambda d: dcn(d, lambda x: rename(x, "s1", "s 1")), ("node name 's 1'", "valid")),
    Case("name-with-newline", lambda d: dcn(d, lambda x: rename(x, "s1", "s\n1")), ("node name 's\\n1'",)),
    Case("name-with-semicolon", lambda d: dcn(d, lambda x: rename(x, "h1", "h1;rm")), ("node name 'h1;rm'",)),
    Case("name-with-dot-dot-slash", lambda d: dcn(d, lambda x: rename(x, "s1", "../s1")), ("node name '../s1'",)),
    Case("name-of-200-characters", lambda d: dcn(d, lambda x: rename(x, "s1", "s" * 200)), ("(200 characters)",)),
    Case("names-equal-in-15-characters", lambda d: dcn(d, lambda x: (rename(x, "s1", "switch_number_1_a"),
                                                                     rename(x, "h1", "switch_number_1_b"))),
         ("switch_number_1_", "at most 15")),
    Case("interface-name-too-long", lambda d: dcn(d, lambda x: (rename(x, "s1", "sw12345678"), x["nodes"][0].update(ports=13),
                                                                x["links"][1].update(b_port=12))),
         ("sw12345678-eth12", "16 characters", "at most 15")),
    Case("interface-name-too-long-tutorials", lambda d: ["run", str(put(d, "topology.json", {
        "hosts": TUTORIAL["hosts"], "switches": {"sw12345678": {}},
        "links": [["h1", "sw12345678-p1"], ["h2", "sw12345678-p12"]]}))], ("sw12345678-eth12", "at most 15")),
    Case("port-511-dcnlab", lambda d: dcn(d, lambda x: (x["nodes"][0].update(ports=512), x["links"][1].update(b_port=511))),
         ("node s1 ports", "512 ports reach port 511", "0..510")),
    Case("port-512-dcnlab", lambda d: dcn(d, lambda x: x["links"][1].update(b_port=512)),
         ("b_port", "port 512 is invalid", "valid: 0..510")),
    Case("port-511-tutorials", lambda d: ["run", str(put(d, "topology.json", {**TUTORIAL, "links": [
        ["h1", "s1-p511"], ["h2", "s2-p1"], ["s1-p2", "s2-p2"]]}))], ("511", "valid: 0..510")),
    Case("port-512-p4app", lambda d: (put(d, "prog.p4", "//\n"), ["run", str(put(d, "p4app.json", {**P4APP, "topology": {
        **P4APP["topology"], "links": [["h1", "s1", {"port2": 512}], ["h2", "s1"]]}}))])[1], ("512", "valid: 0..510")),
    Case("multicast-mac", lambda d: dcn(d, lambda x: host(x, 0, mac="01:00:5e:00:00:01")), ("host h1 mac", "multicast")),
    Case("broadcast-mac", lambda d: dcn(d, lambda x: host(x, 0, mac="ff:ff:ff:ff:ff:ff")), ("host h1 mac", "broadcast")),
    Case("zero-mac", lambda d: dcn(d, lambda x: host(x, 0, mac="00:00:00:00:00:00")), ("host h1 mac", "all-zero")),
    Case("multicast-ip", lambda d: dcn(d, lambda x: host(x, 0, ip="224.0.0.1")), ("host h1 ip", "multicast")),
    Case("broadcast-ip", lambda d: dcn(d, lambda x: host(x, 0, ip="255.255.255.255")), ("host h1 ip", "broadcast")),
    Case("subnet-broadcast-ip", lambda d: tut_host(d, ip="10.0.1.255/24", mac="08:00:00:00:01:11"),
         ("host h1 ip", "broadcast address of 10.0.1.0/24")),
    Case("network-address-ip", lambda d: tut_host(d, ip="10.0.1.0/24", mac="08:00:00:00:01:11"),
         ("host h1 ip", "network address of 10.0.1.0/24")),
    Case("zero-ip", lambda d: dcn(d, lambda x: host(x, 0, ip="0.0.0.0")), ("host h1 ip", "unspecified")),
    Case("loopback-ip", lambda d: dcn(d, lambda x: host(x, 0, ip="127.0.0.1")), ("host h1 ip", "loopback")),
    Case("gateway-is-own-address", lambda d: dcn(d, lambda x: host(x, 0, gateway="10.0.1.1")),
         ("host h1 gateway", "own address")),
    Case("multicast-gateway-mac", lambda d: dcn(d, lambda x: host(x, 0, gateway="10.0.1.254", gateway_mac="ff:ff:ff:ff:ff:ff")),
         ("host h1 gateway_mac", "broadcast")),
]


@pytest.fixture
def sentinels(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing may start: the emulation, the compiler and the preflight raise instead."""
    def reached(*a: object, **k: object) -> None:
        raise AssertionError("the command got past its checks to real work")
    monkeypatch.setattr("dcnlab.emu.network.FabricNetwork.start", reached)
    monkeypatch.setattr("dcnlab.p4src.compiler.compile_program", reached)
    monkeypatch.setattr("dcnlab.emu.preflight.require", reached)


@pytest.fixture
def hang_guard() -> Iterator[None]:
    def hung(signum: int, frame: object) -> None:
        raise TimeoutError(f"still computing after {HANG_GUARD} s of CPU")
    old = signal.signal(signal.SIGPROF, hung)
    signal.setitimer(signal.ITIMER_PROF, HANG_GUARD)      # CPU time: a busy machine does not move it
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_file_is_one_short_escaped_line_and_exit_2(case, tmp_path, monkeypatch, capsys, sentinels, hang_guard):
    d = tmp_path / "files"
    d.mkdir()
    cwd = tmp_path / "cwd"         # the working directory: a relative reference is also looked for here
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("DCNLAB_RUN_ROOT", str(tmp_path / "runs"))
    argv = case.build(d)
    rc = main(argv)
    out, err = capsys.readouterr()
    assert not CONTROL.search(out + err), f"raw control character in the output: {(out + err)[:300]!r}"
    lines = err.strip("\n").split("\n")
    assert rc == 2 and not out and len(lines) == 1 and "Traceback" not in err, (rc, out[:300], err[:600])
    line = lines[0]
    assert line.startswith("dcnlab: error: ") and len(line) <= MAX_LINE, line[:MAX_LINE + 100]
    assert all(w in line for w in case.words), line
    assert not (tmp_path / "runs").exists()


def test_the_campaign_covers_every_item():
    """One table, every class of the issue's items 10-14 (a new hostile file is one more row)."""
    assert len(CASES) == len({c.id for c in CASES}) >= 50


def test_every_error_line_is_printed_escaped(capsys, monkeypatch):
    """The net under every message: whatever a message quotes, the CLI prints no raw control character."""
    from dcnlab.cli.argtypes import one_line
    from dcnlab.topos.errors import UserError

    assert one_line("a\x1b[2Jb\x00c\nd\u202e") == "a\\x1b[2Jb\\x00c | d\\u202e"

    def hostile(args: object) -> int:
        raise UserError("file \x1b[2J\x1b[H\x07 is bad")
    monkeypatch.setattr("dcnlab.cli.run.cmd_run", hostile)
    assert main(["run", "\x1b]0;title\x07x.json"]) == 2
    out, err = capsys.readouterr()
    assert not CONTROL.search(out + err) and "\\x1b[2J" in err, err
