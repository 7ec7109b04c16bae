"""The parser ``main`` builds for one command parses exactly as the whole parser, and imports only that command.

``dcnlab run`` should not pay for the report, the benchmarks or the reproductions at every start:
``build_parser(argv)`` registers only the command ``argv`` names.
"""

from __future__ import annotations

import shlex
import subprocess
import sys

import pytest

from dcnlab.cli import COMMANDS, build_parser, command_of
from dcnlab.cli.examples import EXAMPLES

ARGVS = [shlex.split(e.argv) for examples in EXAMPLES.values() for e in examples]


@pytest.mark.parametrize("argv", ARGVS, ids=[" ".join(a)[:60] for a in ARGVS])
def test_the_command_s_own_parser_parses_as_the_whole_one(argv):
    whole = vars(build_parser().parse_args(argv))
    own = vars(build_parser(argv).parse_args(argv))
    assert _unwrapped(own.pop("func")) is _unwrapped(whole.pop("func"))
    assert own == whole


def _unwrapped(func):
    """The command function under a per-parser wrapper (``plan --view``'s)."""
    while hasattr(func, "__wrapped__"):
        func = func.__wrapped__
    return func


def test_every_command_is_registered_by_its_module():
    whole = build_parser()
    sub = next(a for a in whole._actions if a.dest == "cmd")
    assert set(sub.choices) == set(COMMANDS)
    for command in COMMANDS:
        own = build_parser([command])
        assert command in next(a for a in own._actions if a.dest == "cmd").choices


@pytest.mark.parametrize("argv, command", [
    (["run", "fattree:k=4"], "run"), (["-v", "-v", "plan", "cist"], "plan"), (["--help"], None),
    (["bogus", "run"], None), ([], None), (["--", "run"], None), (["-vv", "reproduce", "all"], "reproduce"),
])
def test_command_of(argv, command):
    assert command_of(argv) == command


def test_dcnlab_run_imports_no_report_benchmark_or_reproduction():
    code = ("import sys; from dcnlab.cli import build_parser; build_parser(['run', 'fattree:k=4'])"
            ".parse_args(['run', 'fattree:k=4']); "
            "print(sorted(m for m in sys.modules if m.startswith(('dcnlab.report', 'dcnlab.bench', "
            "'dcnlab.reproduce', 'dcnlab.sweep', 'importlib.metadata'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]"


def test_unknown_command_still_lists_every_command(capsys):
    from dcnlab.cli import main
    with pytest.raises(SystemExit) as exit_:
        main(["bogus"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    for command in COMMANDS:
        assert f"'{command}'" in err
