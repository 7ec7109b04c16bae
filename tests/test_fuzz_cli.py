"""Bad-input campaign: fabric specs and ``dcnlab`` options, fuzzed with hypothesis.

Whatever the input, dcnlab answers with a result or with one line ``...: error: ...`` and exit
status 2; never a traceback. Every error names the parameter or option and what is valid.
``dcnlab run`` is fuzzed up to the point where it would start an emulation (that step is
replaced by a sentinel), so the campaign needs neither root nor BMv2.
"""

from __future__ import annotations

import contextlib
import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dcnlab.cli import main
from dcnlab.topos.spec import KINDS

NAMES = sorted({p for k in KINDS.values() for p in k.params} | {"x", "K", "n ", ""})
VALUES = st.one_of(st.integers(-10, 40).map(str), st.integers(-2**70, 2**70).map(str),
                   st.sampled_from(["", "1.5", "abc", "relative", "absolute", "circulant", "0x10", " 4", "=", "-0"]),
                   st.text(max_size=6))


@st.composite
def specs(draw) -> str:
    kind = draw(st.sampled_from([*KINDS, "bcub", "", "fat-tree"]))
    items = draw(st.lists(st.tuples(st.sampled_from(NAMES), VALUES), max_size=5))
    sep = draw(st.sampled_from([":", ":", "", "::"]))
    body = ",".join(f"{k}={v}" if draw(st.booleans()) or not k else k for k, v in items)
    return f"{kind}{sep}{body}"


class ReachedStart(BaseException):
    """Raised where the emulation would start: every option was valid."""


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 2
        except ReachedStart:
            code = 99
    return code, out.getvalue(), err.getvalue()


def assert_clear_error(code: int, err: str) -> None:
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert ": error: " in lines[0] and "Traceback" not in err
    assert any(w in lines[0] for w in ("valid", "choose from", "required", "unrecognized", "expected")), err


FUZZ = settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(specs())
def test_fuzzed_fabric_specs_give_a_result_or_a_clear_error(spec):
    code, out, err = run_cli(["topo", "show", spec])
    if code == 0:
        assert out.startswith("fabric    ") and not err
    else:
        assert_clear_error(code, err)
        assert "dcnlab: error: " in err


class Sentinel(Exception):
    pass


OPTIONS = {"--bw": VALUES, "--max-queue": VALUES, "--queue-rate": VALUES, "--queue-depth": VALUES,
           "--timeout": VALUES, "--hold": VALUES, "--delay": st.one_of(VALUES, st.sampled_from(["1ms", "2us", "0s"])),
           "--log-level": st.one_of(VALUES, st.sampled_from(["off", "debug"]))}


@FUZZ
@given(st.dictionaries(st.sampled_from(sorted(OPTIONS)), st.text(max_size=0), max_size=4).flatmap(
    lambda keys: st.fixed_dictionaries({k: OPTIONS[k] for k in keys})), st.sampled_from(
    ["bcube:n=2,k=0", "fattree:k=4", "fattree:k=3", "dragonfly:a=4,h=2"]))
def test_fuzzed_run_options_give_a_clear_error_before_anything_starts(monkeypatch_session, opts, spec):
    argv = ["run", spec] + [f"{k}={v}" for k, v in opts.items()]
    code, out, err = run_cli(argv)
    if code == 99:   # everything was valid: the emulation would have started here
        return
    assert_clear_error(code, err)


@pytest.fixture(scope="module")
def monkeypatch_session():
    mp = pytest.MonkeyPatch()

    def start(self):
        raise ReachedStart     # not SystemExit: dcnlab reports a SystemExit it did not raise as an error

    mp.setattr("dcnlab.emu.network.FabricNetwork.start", start)
    mp.setattr("dcnlab.cli.run.require_root", lambda what="": None)
    yield mp
    mp.undo()


@pytest.mark.parametrize("argv, needle", [
    (["topo", "show", "fattree:k=4,k=6"], "parameter k is given twice"),
    (["topo", "show", "bcube:n=4"], "missing parameter(s) k"),
    (["topo", "show", "dragonfly:a=4,h=2,arrangement=spiral"], "arrangement"),
    (["run", "fattree:k=4", "--bw", "0"], "--bw: 0 is out of range; valid: 0.001..100000 Mbit/s"),
    (["run", "fattree:k=4", "--queue-depth", "1.5"], "--queue-depth: '1.5' is not an integer; valid: 1..1e+06"),
    (["run", "fattree:k=4", "--delay", "fast"], "--delay='fast' is not a delay"),
    (["bench", "nonsense"], "invalid choice"),
])
def test_known_bad_inputs(argv, needle, monkeypatch):
    monkeypatch.setattr("dcnlab.cli.run.require_root", lambda what="": None)
    code, _, err = run_cli(argv)
    assert_clear_error(code, err)
    assert needle in err
