"""reproduce congestion with a bad --out: the error is its one line, before the model's notes (it printed the
backend note first, so the error was not one line)."""

from __future__ import annotations

from dcnlab.cli import main


def test_reproduce_congestion_bad_out_is_one_line_before_any_note(capsys):
    assert main(["reproduce", "congestion", "--emulate", "off", "--out", "/dev/null"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["dcnlab: error: --out /dev/null: exists and is not a directory"], err
