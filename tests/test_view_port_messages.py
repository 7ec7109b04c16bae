"""Every option that takes a live view's port says, when refused, how to ask for a free port with that option:
``--view`` alone (its value is optional), or, for ``dcnlab view --port``, which needs a value, leaving the option
out. Before, ``dcnlab view --port ٤`` said "or no value for a free one", and ``--port`` alone is a usage error.
"""

from __future__ import annotations

import argparse

import pytest

from dcnlab import view
from dcnlab.cli import build_parser

PORT_TYPES = (view.view_port, view.view_dir_port)


def _port_options() -> list[tuple[list[str], argparse.Action]]:
    """(the words naming a command, its action) of every option of every command whose type is a view port."""
    out = []

    def walk(p: argparse.ArgumentParser, words: list[str]) -> None:
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for name, sub in a.choices.items():
                    walk(sub, [*words, name])
            elif a.type in PORT_TYPES:
                out.append((words, a))
    walk(build_parser(), [])
    return out


def _refusal(argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as e:
        build_parser(argv).parse_args(argv)
    err = capsys.readouterr().err
    assert e.value.code == 2 and "Traceback" not in err, err
    return err.splitlines()[-1]


def test_each_port_option_says_how_to_get_a_free_port_with_it(capsys):
    found = _port_options()
    names = {f"{' '.join(words)} {a.option_strings[0]}" for words, a in found}
    assert {"view --port", "plan cist --view", "run --view", "lab --view"} <= names, names
    for words, a in found:
        opt = a.option_strings[0]
        err = _refusal([*words, opt, "٤"], capsys)
        if a.nargs == "?":
            assert f"argument {opt}: '٤' is not a port; valid: 1024..65535, or {opt} alone for a free one (" in err, err
            assert a.const == 0                               # as it says: alone, a free port
        else:
            assert f"argument {opt}: '٤' is not a port; valid: 1024..65535 (leave out {opt} for a free one)" in err, err
            assert a.default is None and not a.required      # as it says: left out, a free port
            assert "expected one argument" in _refusal([*words, opt], capsys)            # no value: refused


def test_a_port_in_range_is_taken_by_both():
    for port in PORT_TYPES:
        assert port("4001") == 4001 and port("65535") == 65535
        for text in ("1023", "65536", "٤٠٠١", "", "80x"):
            with pytest.raises(argparse.ArgumentTypeError):
                port(text)
