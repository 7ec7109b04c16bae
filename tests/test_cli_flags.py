"""One spelling per meaning across the mechanisms: ``--algo`` names every mechanism's algorithm (congestion's policy
too, ``--policy`` being the same option), and every ``dcnlab reproduce`` command takes ``--emulate auto|on|off``
with one default and one meaning (the model parts always; the BMv2 parts where root and the toolchain are, always,
or never), the old spellings still parsing with a one-line notice."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import pytest

from dcnlab.cli import build_parser, main
from dcnlab.cli.examples import leaf_parsers
from dcnlab.emu import preflight
from work_starts import WORK_STARTS

REPRODUCE = ("all", "aggregation", "multicast", "cist", "congestion")
MISSING = ["simple_switch_grpc, p4c not found on PATH (or set $DCNLAB_P4_PREFIX to their install prefix); see README, "
           "'The P4 toolchain'"]


class ReachedWork(Exception):
    """A sentinel at one of :data:`work_starts.WORK_STARTS` was called: the command got to its work."""


@pytest.fixture
def sentinels(monkeypatch):
    """Every place where a command's work starts raises :class:`ReachedWork` (nothing runs for real)."""
    def reached(*args, **kwargs):
        raise ReachedWork

    for target in WORK_STARTS:
        monkeypatch.setattr(target, reached)


def toolchain(monkeypatch, present: bool) -> None:
    """Root and the toolchain present or not, as every reproduce command asks (:func:`preflight.problems`)."""
    monkeypatch.setattr(preflight.Needs, "problems", lambda self: [] if present else list(MISSING))


def parse(argv: list[str]) -> argparse.Namespace:
    """``argv`` parsed by the whole parser and by the command's own (lazy) one: the same namespace (without the
    command function, which each parser wraps anew)."""
    whole, own = vars(build_parser().parse_args(argv)), vars(build_parser(argv).parse_args(argv))
    whole.pop("func"), own.pop("func")
    assert whole == own
    return argparse.Namespace(**whole)


# -- --algo ---------------------------------------------------------------------------------------------------

def _listing(capsys, flag: str) -> str:
    with pytest.raises(SystemExit) as e:
        main(["plan", "congestion", flag, "list"])
    assert e.value.code == 0
    return capsys.readouterr().out


def test_plan_congestion_algo_list_is_the_policy_listing(capsys):
    algo, policy = _listing(capsys, "--algo"), _listing(capsys, "--policy")
    assert algo == policy
    assert "\n  tenant-fair " in algo and "\n  per-flow " in algo and "or --algo package.module:name" in algo


@pytest.mark.parametrize("command", [["plan", "congestion"], ["reproduce", "congestion"]])
def test_congestion_algo_and_policy_are_one_option(command):
    a, p = parse([*command, "--algo", "per-flow"]), parse([*command, "--policy", "per-flow"])
    assert vars(a) == vars(p) and "policy" not in vars(a)
    assert a.algo == ("per-flow" if command[0] == "plan" else ["per-flow"])


def test_plan_congestion_algo_runs_as_policy_did(capsys):
    outs = []
    for flag in ("--algo", "--policy"):
        assert main(["plan", "congestion", flag, "per-flow", "--tenant", "a:1:1", "--tenant", "b:1:3", "--json"]) == 0
        outs.append(json.loads(capsys.readouterr().out))
    assert outs[0] == outs[1] and outs[0]["policy"] == "per-flow"


@pytest.mark.parametrize("command", [["plan", m] for m in ("aggregation", "multicast", "congestion", "cist")]
                         + [["reproduce", m] for m in ("aggregation", "multicast", "congestion", "cist")])
def test_every_mechanism_shows_algo_in_its_help(command, capsys):
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    out = capsys.readouterr().out
    assert "--algo ALGO" in out
    if command[1] == "congestion":
        # argparse writes the metavar after each flag up to Python 3.12, once after the last from 3.13 on
        flags = "--algo, --policy ALGO" if sys.version_info >= (3, 13) else "--algo ALGO, --policy ALGO"
        assert flags in out and "--policy is the same option" in " ".join(out.split())


# -- --emulate --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("command", REPRODUCE)
def test_every_reproduce_help_shows_emulate_and_its_default(command, capsys):
    with pytest.raises(SystemExit):
        main(["reproduce", command, "--help"])
    out = capsys.readouterr().out
    text = " ".join(out.split())
    assert "[--emulate {auto,on,off}]" in text and "\n  --emulate {auto,on,off}\n" in out
    assert "(default: auto)" in text and "the model parts always run, then the BMv2 parts" in text
    assert "on, required (without them, one error line before any work); off, model only" in text
    assert "[--model]" not in text and "\n  --model" not in out     # the old spelling: named in --emulate's help only
    if command == "congestion":
        assert "Old spellings still work, with a notice: a bare --emulate is on (it used to run BMv2 instead of the " \
               "model); --model is off" in text


@pytest.mark.parametrize("command", REPRODUCE)
@pytest.mark.parametrize("mode", ["auto", "on", "off"])
def test_every_reproduce_takes_each_mode(command, mode, capsys):
    assert parse(["reproduce", command, "--emulate", mode]).emulate == mode
    assert parse(["reproduce", command, f"--emulate={mode}"]).emulate == mode
    assert parse(["reproduce", command]).emulate == "auto"
    assert capsys.readouterr().err == ""        # no notice for the current spelling


@pytest.mark.parametrize("command", REPRODUCE)
def test_a_bad_mode_is_one_line(command, capsys):
    with pytest.raises(SystemExit) as e:
        main(["reproduce", command, "--emulate", "yes"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.count("\n") == 1
    assert "argument --emulate: invalid choice: 'yes' (choose from " in err and all(m in err for m in ("auto", "on"))


@pytest.mark.parametrize("argv, mode, old", [
    (["reproduce", "aggregation", "--emulate"], "on", "a bare --emulate"),
    (["reproduce", "multicast", "--emulate", "--quick"], "on", "a bare --emulate"),
    (["reproduce", "cist", "--quick", "--emulate"], "on", "a bare --emulate"),
    (["reproduce", "congestion", "--emulate", "--quick"], "on", "a bare --emulate"),
    (["reproduce", "all", "--emulate"], "on", "a bare --emulate"),
    (["reproduce", "congestion", "--model", "--quick"], "off", "--model"),
])
def test_old_spellings_parse_with_a_one_line_notice(argv, mode, old, capsys):
    args = build_parser().parse_args(argv)
    assert args.emulate == mode and args.quick == ("--quick" in argv)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(f"dcnlab reproduce {argv[1]}: notice: {old} is the old spelling of --emulate {mode}")
    assert err[0].endswith(f"write --emulate {mode}")


def test_model_and_emulate_together_are_refused(capsys):
    with pytest.raises(SystemExit) as e:
        main(["reproduce", "congestion", "--model", "--emulate", "on"])
    assert e.value.code == 2 and "argument --emulate: not allowed with argument --model" in capsys.readouterr().err


@pytest.mark.parametrize("command", REPRODUCE)
def test_emulate_on_without_the_toolchain_is_one_line_before_any_work(command, monkeypatch, sentinels, tmp_path,
                                                                        capsys):
    toolchain(monkeypatch, present=False)
    out = tmp_path / "out"
    assert main(["reproduce", command, "--emulate", "on", "--quick", "--out", str(out)]) == 2     # no ReachedWork
    io = capsys.readouterr()
    assert io.out == "" and io.err.count("\n") == 1 and "Traceback" not in io.err
    assert io.err.startswith(f"dcnlab: error: dcnlab reproduce {command} --emulate on needs simple_switch_grpc, p4c: "
                             f"not found on PATH")
    assert not out.exists()


@pytest.mark.parametrize("command", REPRODUCE)
@pytest.mark.parametrize("mode, present", [("auto", False), ("auto", True), ("off", True), ("off", False),
                                           ("on", True)])
def test_the_model_parts_come_first_whatever_the_mode(command, mode, present, monkeypatch, sentinels, tmp_path):
    toolchain(monkeypatch, present)
    with pytest.raises(ReachedWork):
        main(["reproduce", command, "--emulate", mode, "--quick", "--out", str(tmp_path / "out")])


def _bmv2_asked(command: str, monkeypatch) -> list[tuple[bool, str]]:
    """Where each mechanism's command hands over: whether the BMv2 part is to run, and why (or why not)."""
    seen: list[tuple[bool, str]] = []
    if command != "all":        # every reproduce <mechanism> hands its plan to the one runner (dcnlab.cli.reproduce)
        from dcnlab.cli import reproduce as reproduce_cli
        monkeypatch.setattr(reproduce_cli, "run_alone", lambda rep, args, out, planned: seen.append(planned) or 0)
    else:
        from dcnlab.report import reproduce_all

        def run(out, mode, emulate, *args):
            seen.append(reproduce_all.emulation_plan(emulate))
            raise ReachedWork       # the run itself: tests/test_reproduce_all.py

        monkeypatch.setattr(reproduce_all, "run", run)
    return seen


@pytest.mark.parametrize("command", ["aggregation", "multicast", "cist", "congestion", "all"])
@pytest.mark.parametrize("mode, present, runs, why", [
    ("auto", True, True, "root and the P4 toolchain are present (--emulate auto)"),
    ("auto", False, False, "not run: simple_switch_grpc, p4c not found on PATH"),
    ("on", True, True, "root and the P4 toolchain are present (--emulate on)"),
    ("off", True, False, "not run: --emulate off"),
    ("off", False, False, "not run: --emulate off"),
])
def test_one_meaning_of_each_mode(command, mode, present, runs, why, monkeypatch, tmp_path, capsys):
    """The BMv2 part runs exactly when ``reproduce all`` runs its BMv2 experiments, with the same reason."""
    toolchain(monkeypatch, present)
    seen = _bmv2_asked(command, monkeypatch)
    try:
        assert main(["reproduce", command, "--emulate", mode, "--quick", "--out", str(tmp_path / "out"),
                     *(["--json"] if command != "multicast" else [])]) == 0
    except ReachedWork:
        assert command == "all"
    assert len(seen) == 1 and seen[0][0] is runs and seen[0][1].startswith(why), seen


@pytest.mark.parametrize("argv, option", [
    (["reproduce", "aggregation", "--topo", "fattree:k=4"], "--topo"),
    (["reproduce", "multicast", "--colors", "3"], "--colors"),
    (["reproduce", "multicast", "--cut", "down"], "--cut"),
    (["reproduce", "congestion", "--spec", "dragonfly:p=5,a=1,h=1"], "--spec"),
    (["reproduce", "congestion", "--timer-mode", "reset"], "--timer-mode"),
])
@pytest.mark.parametrize("mode", ["off", "auto"])
def test_bmv2_options_are_errors_when_bmv2_does_not_run(argv, option, mode, monkeypatch, sentinels, capsys):
    toolchain(monkeypatch, present=False)       # auto without the toolchain: no BMv2 part either
    assert main([*argv, "--emulate", mode]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{option} applies only when the BMv2 experiment runs" in err
    assert ("(--emulate off)" if mode == "off" else "(simple_switch_grpc, p4c not found on PATH") in err


# -- the project's own bookkeeping stays out of the help ---------------------------------------------------------

INTERNAL = re.compile(r"\bissue \d+|\bitem \d+ of|\breport \d{3}\b", re.I)
"""The project's internal issue numbers and report ids, which a user cannot open (papers are cited instead)."""


def test_no_help_text_cites_an_internal_issue():
    for path, leaf in leaf_parsers(build_parser()).items():
        assert not INTERNAL.search(leaf.format_help()), (path, INTERNAL.findall(leaf.format_help()))


@pytest.mark.parametrize("source", sorted((Path(__file__).resolve().parent.parent / "dcnlab" / "cli").glob("*.py")),
                         ids=lambda p: p.name)
def test_no_cli_module_cites_an_internal_issue(source):
    found = [f"{source.name}:{n}: {line.strip()}" for n, line in enumerate(source.read_text().splitlines(), 1)
             if INTERNAL.search(line)]
    assert not found, found


@pytest.mark.parametrize("value", ["--", "", "yes", "-"])
def test_an_emulate_value_that_is_no_mode_is_one_line_error(value, capsys):
    """``--emulate=--`` reached the option as a bare ``--emulate`` (argparse drops an explicit ``--``) and ran."""
    from dcnlab.cli import main

    assert main(["reproduce", "cist", f"--emulate={value}", "--quick", "--json"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--emulate" in err[0] and "auto, on, off" in err[0]
