"""Every example in ``dcnlab ... --help`` runs as written."""

from __future__ import annotations

import shlex
import subprocess
import sys

import pytest

from dcnlab.cli import build_parser, main
from dcnlab.cli.examples import EXAMPLES, leaf_parsers

QUICK = [(path, e.argv) for path, exs in EXAMPLES.items() for e in exs if e.kind == "quick"]
ALL = [(path, e.argv) for path, exs in EXAMPLES.items() for e in exs]


def test_every_command_has_examples_and_no_example_is_stale():
    leaves = set(leaf_parsers(build_parser()))
    assert leaves == set(EXAMPLES), (leaves ^ set(EXAMPLES))


def test_examples_are_in_the_help(capsys):
    for path, exs in EXAMPLES.items():
        with pytest.raises(SystemExit):
            main([*path, "--help"])
        out = capsys.readouterr().out
        assert "examples:\n" in out
        assert all(f"  dcnlab {e.argv}" in out for e in exs), path


@pytest.mark.parametrize(("path", "argv"), ALL, ids=[a for _, a in ALL])
def test_every_example_parses_to_its_command(path, argv):
    words = shlex.split(argv)
    assert tuple(words[:len(path)]) == path
    args = build_parser().parse_args(words)
    assert callable(args.func)


@pytest.mark.parametrize(("path", "argv"), QUICK, ids=[a for _, a in QUICK])
def test_quick_examples_run(path, argv, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)          # examples that write (topo export -o) write here
    assert main(shlex.split(argv)) == 0, capsys.readouterr().err
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    words = shlex.split(argv)
    if "-o" in words:
        assert (tmp_path / words[words.index("-o") + 1]).stat().st_size > 0
    else:
        assert out


def test_version():
    r = subprocess.run([sys.executable, "-m", "dcnlab", "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip().startswith("dcnlab ") and r.stdout.split()[1][0].isdigit()
