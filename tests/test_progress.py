"""Progress display: a tqdm bar on a terminal, one plain line per part in a log."""

from __future__ import annotations

import io
import os
import pty
import select
from pathlib import Path

from dcnlab.sweep.progress import Progress, is_terminal

ROOT = Path(__file__).resolve().parent.parent


def test_not_a_terminal_gives_one_line_and_no_carriage_returns():
    log = io.StringIO()
    with Progress(40, "aggregation rounds", unit="round", file=log) as bar:
        for _ in range(40):
            bar.update()
        bar.set_postfix("ignored in a log")
    text = log.getvalue()
    assert "\r" not in text
    lines = text.splitlines()
    assert len(lines) == 1 and lines[0].startswith("aggregation rounds: 40 rounds in ")


def test_disabled_is_silent():
    log = io.StringIO()
    with Progress(3, "x", enabled=False, file=log) as bar:
        bar.update(3)
    assert log.getvalue() == ""


def test_a_terminal_gets_the_bar():
    master, slave = pty.openpty()
    try:
        with os.fdopen(os.dup(slave), "w") as tty:
            assert is_terminal(tty)
            with Progress(5, "chaos", unit="cycle", file=tty) as bar:
                bar.update(5)
            tty.flush()
            drawn = ""
            while select.select([master], [], [], 0.5)[0]:     # the bar may arrive in several writes
                drawn += os.read(master, 65536).decode()
        assert "\r" in drawn and "chaos" in drawn and "5/5" in drawn
    finally:
        os.close(master)
        os.close(slave)


def test_no_module_draws_tqdm_bars_itself():
    """Every long loop goes through dcnlab.sweep.progress, so no bar ends up in a log file."""
    users = [p.relative_to(ROOT) for d in ("dcnlab/cli", "dcnlab/bench", "dcnlab/report", "dcnlab/reproduce", "dcnlab/sweep",
                                                    "dcnlab/figures", "dcnlab/results", "dcnlab/view", "dcnlab/controller", "dcnlab/emu", "dcnlab/traffic", "dcnlab/topos")
             for p in (ROOT / d).rglob("*.py") if "tqdm" in p.read_text() and p.name != "progress.py"]
    assert users == []
