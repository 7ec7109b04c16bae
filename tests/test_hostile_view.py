"""The live view, its run files and dcnlab's number options against a hostile user.

* The view's server answers every request (404, 400, 500), never drops the connection: a BCube node name of
  thousands of digits, a block id with a superscript digit; and it accepts 500 requests at once.
* ``dcnlab view RUN_DIR`` on damaged run files, or a run whose namespace is gone, is one line naming the
  file and what is wrong; Ctrl-C ends it with 130, as it ends ``plan --view``.
* Non-ASCII digits are no numbers in any option (:mod:`dcnlab.topos.numbers`).
"""

from __future__ import annotations

import argparse
import http.client
import json
import secrets
import subprocess
import threading
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest

from dcnlab import view
from dcnlab.topos.numbers import MAX_DIGITS
from dcnlab.topos.spec import parse_spec
from dcnlab.view.server import BACKLOG, MAX_PART, ViewServer
from dcnlab.view.sources import PlanSource

GUARD = 60.0
"""Hang guard of one request (the 500 parallel ones take about 3 s in all on an idle 2-core machine)."""


# -- item 9: every request answered -------------------------------------------------------------------------
def _conn_get(conn: http.client.HTTPConnection, path: str) -> tuple[int, bytes]:
    conn.request("GET", path)
    r = conn.getresponse()
    return r.status, r.read()


def test_bcube_names_of_too_many_digits_name_no_node_as_in_the_other_families():
    """int() of 5,000 digits raises ValueError (Python's limit on integer conversion): BCube's parser let it
    through where every other family stops at MAX_DIGITS."""
    bcube, fattree = parse_spec("bcube:n=4,k=1"), parse_spec("fattree:k=4")
    for name in ("v" + "1" * 5000, "w" + "9" * (MAX_DIGITS + 1), "h" + "0" * 200, "v²", "v٣"):
        with pytest.raises(KeyError):
            bcube.node(name)
        assert PlanSource(bcube).has_node(name) is False
    with pytest.raises(KeyError):
        fattree.node("e" + "1" * 5000)
    assert bcube.node("v3").name == "v3" and bcube.node("w7").name == "w7"


@pytest.mark.parametrize("step", ["²", "٣", "03", "1" * 5000, "-1", "8", "", " 3"])
def test_a_block_id_with_a_step_that_is_not_one_of_0_to_7_opens_nothing(monkeypatch, step):
    """str.isdigit() is true for '²' and int() refuses it; a step of 5,000 digits is past int()'s limit."""
    from dcnlab.view import opening
    monkeypatch.setattr(opening, "MAX_OPEN", 5)            # pod0/host (64 hosts) splits into sub-blocks
    src = PlanSource(parse_spec("fattree:k=16"), max_nodes=100)
    assert src.block(f"pod0/host#{step}") is None
    assert src.block(f"pod0/edge#3#{step}") is None
    assert src.block("pod0/host#3")["block"] == "pod0/host#3"


def test_the_server_answers_hostile_paths_and_keeps_the_connection(capsys):
    with ViewServer(PlanSource(parse_spec("bcube:n=4,k=1"))) as s:
        conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=GUARD)
        t = f"?token={s.token}"
        status, body = _conn_get(conn, f"/api/switch/v{'1' * 5000}{t}")
        assert status == 400 and str(MAX_PART) in json.loads(body)["error"]
        assert _conn_get(conn, f"/api/switch/v{'1' * 300}{t}")[0] == 404      # under MAX_PART: no such node
        assert _conn_get(conn, f"/api/switch/{urllib.parse.quote('v²')}{t}")[0] == 404
        assert _conn_get(conn, f"/api/link/v{'1' * 300}/w0{t}")[0] == 404
        assert _conn_get(conn, f"/api/switch/v3{t}")[0] == 200                # the same connection still answers
        conn.close()
    with ViewServer(PlanSource(parse_spec("fattree:k=16"), max_nodes=100)) as s:
        conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=GUARD)
        for bid, code in (("pod0/host#²", 404), ("pod0/edge#²", 404), ("pod0/host#" + "1" * 5000, 400),
                          ("pod0/host#" + "1" * 300, 404), ("pod0/edge", 200)):
            got = _conn_get(conn, f"/api/block/{urllib.parse.quote(bid, safe='')}?token={s.token}")[0]
            assert got == code, (bid[:20], got)
        conn.close()
    assert "Traceback" not in capsys.readouterr().err


def test_a_source_that_fails_is_a_500_with_one_line_not_a_dropped_connection(capsys):
    class Failing(PlanSource):
        def switch(self, name):
            raise RuntimeError("switch read-back broke")

    with ViewServer(Failing(parse_spec("fattree:k=4"))) as s:
        conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=GUARD)
        status, body = _conn_get(conn, f"/api/switch/e0_0?token={s.token}")
        assert status == 500 and json.loads(body) == {"error": "internal error: RuntimeError: switch read-back broke"}
        assert _conn_get(conn, f"/api/topology?token={s.token}")[0] == 200
        conn.close()
    err = capsys.readouterr().err
    assert err == "view: /api/switch/e0_0 failed: RuntimeError: switch read-back broke\n"    # no token, no traceback


def _listen_backlog(port: int) -> int:
    """The backlog of the socket listening on 127.0.0.1:``port`` (``ss`` shows it as Send-Q)."""
    out = subprocess.run(["ss", "-Hltn", f"sport = :{port}"], capture_output=True, text=True, check=True).stdout
    (line,) = [x for x in out.splitlines() if f"127.0.0.1:{port}" in x]
    return int(line.split()[2])


def test_500_parallel_requests_for_a_fat_tree_k16_topology_are_all_answered():
    """socketserver's backlog of 5 left about half of 500 parallel requests unanswered after 60 s."""
    n = 500
    with open("/proc/sys/net/core/somaxconn") as f:
        somaxconn = int(f.read())
    with ViewServer(PlanSource(parse_spec("fattree:k=16"))) as s:
        assert _listen_backlog(s.port) == min(BACKLOG, somaxconn) >= min(n, somaxconn)
        url = f"http://127.0.0.1:{s.port}/api/topology?token={s.token}"
        with urllib.request.urlopen(url, timeout=GUARD) as r:
            want = r.read()
        start = threading.Barrier(n)

        def one(_: int) -> object:
            start.wait(timeout=GUARD)                      # all at once
            try:
                with urllib.request.urlopen(url, timeout=GUARD) as r:
                    return r.status if r.read() == want else "different body"
            except (OSError, http.client.HTTPException) as e:
                return type(e).__name__
        with ThreadPoolExecutor(n) as ex:
            got = list(ex.map(one, range(n)))
    assert {x: got.count(x) for x in set(got)} == {200: n}


# -- item 10: dcnlab view RUN_DIR on damaged run files --------------------------------------------------------
@pytest.fixture
def run_dir(tmp_path, monkeypatch):
    """A run directory of fattree:k=4 whose namespace exists (as far as the view asks), served by nobody:
    a view that starts stops at once (view.wait raises KeyboardInterrupt)."""
    from dcnlab.cli import run as cli_run
    from dcnlab.emu import netns

    d = tmp_path / "20250101-000000-abcdef-fattree-k-4"
    d.mkdir()
    (d / "state.json").write_text(json.dumps({"spec": "fattree:k=4", "netns": "dcnlab-h4-test", "finished": False}))
    monkeypatch.setattr(netns, "exists", lambda name: name == "dcnlab-h4-test")
    monkeypatch.setattr(cli_run, "require_root", lambda *a, **k: None)
    served = []

    def wait():
        served.append(True)
        raise KeyboardInterrupt
    monkeypatch.setattr(view, "wait", wait)
    return SimpleNamespace(path=d, served=served)


def _view(run, capsys) -> tuple[int, str]:
    from dcnlab.cli import main
    code = main(["view", str(run.path)])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("text, says", [
    ("{not json", "state.json': not valid JSON (Expecting property name"),
    ("", "state.json': not valid JSON (Expecting value: line 1 column 1"),
    ("[1, 2]", "state.json': not a JSON object"),
    ('{"spec": "fattree:k=4", "netns": 5}', "state.json': field 'netns' is 5; valid:"),
    ('{"spec": "fattree:k=4", "netns": "dcnlab-h4-test", "processes": {"s1": "x"}}', "field 'processes' is"),
    ('{"spec": "fattree:k=4", "netns": "dcnlab-h4-test", "finished": 1}', "field 'finished' is 1"),
    ('{"spec": "fattree:k=4", "netns": "../../etc"}', "field 'netns' is '../../etc'; valid: a namespace name"),
], ids=["broken", "empty", "list", "netns-number", "pid-text", "finished-number", "netns-path"])
def test_a_damaged_state_json_is_one_line_naming_the_file_and_field(run_dir, capsys, text, says):
    (run_dir.path / "state.json").write_text(text)
    code, err = _view(run_dir, capsys)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"dcnlab: error: view: run file '{run_dir.path}/state.json") and says in err, err
    assert not run_dir.served


@pytest.mark.parametrize("text, says", [
    ("nope", "not valid JSON (Expecting value"),
    ('{"switch": "e0_0"}', "not a JSON list of endpoints"),
    ('[{"device_id": 1, "grpc": "unix:/x", "thrift_port": 9090, "netns": "n"}]', "endpoint 0 has no 'switch'"),
    ('[{"switch": "e0_0", "device_id": "1", "grpc": "unix:/x", "thrift_port": 9090, "netns": "n"}]',
     "endpoint 0's 'device_id' is '1'; valid: int"),
    ('[{"switch": "e0_0", "device_id": 1, "grpc": "unix:/x", "grpc_tcp": 5, "thrift_port": 9090, "netns": "n"}]',
     "endpoint 0's 'grpc_tcp' is 5; valid: str or null"),
    ('["e0_0"]', "endpoint 0 is 'e0_0'; valid: an object with switch, device_id"),
], ids=["broken", "object", "no-switch", "device-id-text", "grpc-tcp-number", "not-an-object"])
def test_a_damaged_endpoints_json_is_one_line_naming_the_file_and_entry(run_dir, capsys, text, says):
    (run_dir.path / "endpoints.json").write_text(text)
    code, err = _view(run_dir, capsys)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"dcnlab: error: view: run file '{run_dir.path}/endpoints.json': ") and says in err, err
    assert not run_dir.served


def test_a_run_whose_namespace_is_gone_is_refused_in_one_line(run_dir, capsys):
    gone = f"dcnlab-h4-gone-{secrets.token_hex(4)}"
    (run_dir.path / "state.json").write_text(json.dumps({"spec": "fattree:k=4", "netns": gone}))
    code, err = _view(run_dir, capsys)
    assert code == 2 and err == (f"dcnlab: error: view: the run '{run_dir.path.name}' is not up: its network namespace "
                                 f"'{gone}' no longer exists (the run ended without saying so; 'dcnlab clean' "
                                 f"tidies its directory)\n")
    assert not run_dir.served


def test_ctrl_c_ends_dcnlab_view_with_130_as_plan_view(run_dir, capsys):
    (run_dir.path / "endpoints.json").write_text(json.dumps([
        {"switch": "e0_0", "device_id": 1, "grpc": "unix:/nowhere.sock", "grpc_tcp": None, "thrift_port": 9090,
         "netns": "dcnlab-h4-test", "election_id": None}]))
    code, err = _view(run_dir, capsys)
    assert run_dir.served and code == 130 and err.splitlines()[-1] == "dcnlab: interrupted"


# -- item 11: only ASCII digits are digits ------------------------------------------------------------------
NOT_ASCII = ("٤٠٠١", "४००१", "４００１", "𝟒𝟎𝟎𝟏", "4001²", "١,٢", "١", "٤:١:١")


def _numbers_in(value: object) -> list[object]:
    if isinstance(value, bool):
        return []
    if isinstance(value, (int, float)):
        return [value]
    if isinstance(value, (tuple, list)):
        return [x for v in value for x in _numbers_in(v)]
    return []


def _typed_options() -> list[tuple[str, str, argparse.Action]]:
    """(command, option, action) of every option of every dcnlab command that converts its value."""
    from dcnlab.cli import build_parser

    out = []

    def walk(p: argparse.ArgumentParser, prog: str) -> None:
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for name, sub in a.choices.items():
                    walk(sub, f"{prog} {name}")
            elif a.type is not None and callable(a.type):
                out.append((prog, "/".join(a.option_strings) or a.dest, a))
    walk(build_parser(), "dcnlab")
    return out


def test_no_option_of_any_command_takes_non_ascii_digits_for_a_number():
    """``--view ٤٠٠١`` served on port 4001 and ``--ptf-ports ١,٢`` became 1,2."""
    options = _typed_options()
    names = {f"{prog} {opt}" for prog, opt, _ in options}
    assert {"dcnlab plan cist --view", "dcnlab lab --ptf-ports", "dcnlab view --port", "dcnlab run --bw"} <= names
    took = []
    for prog, opt, a in options:
        for text in NOT_ASCII:
            try:
                value = a.type(text)
            except Exception:     # noqa: BLE001, S112 - refused (ArgumentTypeError, a spec's own error): no number
                continue
            if _numbers_in(value):
                took.append((prog, opt, text, value))
    assert took == []


def test_view_and_ptf_ports_refuse_non_ascii_digits_in_one_line(capsys):
    from dcnlab.cli import build_parser

    for argv, option in ((["plan", "cist", "--topo", "fattree:k=4", "--view", "٤٠٠١"], "--view"),
                         (["lab", "examples/ptf-router", "--ptf", "s1", "--ptf-ports", "١,٢"], "--ptf-ports")):
        with pytest.raises(SystemExit) as e:
            build_parser(argv).parse_args(argv)
        err = capsys.readouterr().err
        assert e.value.code == 2 and err.count("\n") == 1 and f"argument {option}: '" in err, err
    assert view.view_port("4001") == 4001
    ns = build_parser(["lab"]).parse_args(["lab", "examples/ptf-router", "--ptf", "s1", "--ptf-ports", "1, 2"])
    assert ns.ptf_ports == (1, 2)
