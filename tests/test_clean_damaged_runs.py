"""``dcnlab clean`` with a damaged run directory among others: the damaged run (a ``state.json`` that is not JSON,
or holds a field of the wrong type) is skipped with one warning line naming its file, every other run is cleaned,
and the command ends non-zero so that a script sees something was left. Before, the first damaged file stopped the
whole cleanup with one error line, and the runs after it kept their processes.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from dcnlab.cli import main
from dcnlab.cli import run as cli_run
from dcnlab.emu import cleanup
from dcnlab.emu.rundir import TAG_VAR, RunDir, all_runs
from dcnlab.topos.errors import UserError

GUARD = 60.0
"""Seconds to wait for a SIGTERM'd ``sleep`` to end (it ends at once on an idle machine)."""

DAMAGED = {
    "20250101-000000-aaaaaa-broken": ("{not json", "not valid JSON (Expecting property name"),
    "20250101-000002-cccccc-wrong-field": ('{"spec": "fattree:k=4", "netns": 5}', "field 'netns' is 5; valid:"),
}
"""Run directories named to sort before and after the good one, their ``state.json`` and what the warning says."""
GOOD = "20250101-000001-bbbbbb-good"


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Two damaged runs and one crashed good run, whose process (tagged with its id, as dcnlab tags what a run
    starts) is still running."""
    monkeypatch.setenv("DCNLAB_RUN_ROOT", str(tmp_path))
    monkeypatch.setattr(cli_run, "require_root", lambda *a, **k: None)
    for name, (text, _) in DAMAGED.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "state.json").write_text(text)
    (tmp_path / GOOD).mkdir()
    (tmp_path / GOOD / "state.json").write_text(json.dumps({"spec": "fattree:k=4", "owner_pid": 0,
                                                             "socket_dir": str(tmp_path / GOOD)}))
    proc = subprocess.Popen(["sleep", "600"], start_new_session=True, env={**os.environ, TAG_VAR: GOOD})
    try:
        yield tmp_path, proc
    finally:
        proc.kill()
        proc.wait()


def test_clean_skips_a_damaged_run_with_one_line_and_cleans_every_other(runs, capsys):
    root, proc = runs
    code = main(["clean"])
    out, err = capsys.readouterr()
    assert code == 1 and out.splitlines()[0] == "cleaned 1 run(s): 1 process(es), 0 network namespace(s)", out
    assert proc.wait(timeout=GUARD) is not None                     # the good run's process was stopped
    lines = err.splitlines()
    assert len(lines) == len(DAMAGED) and "Traceback" not in err, err
    for line, (name, (_, says)) in zip(lines, sorted(DAMAGED.items())):
        assert line.startswith(f"dcnlab: warning: clean: skipped run {name}: run file '{root}/{name}/state.json': ")
        assert says in line and line.endswith("(fix or remove that directory; the other runs were cleaned)"), line
    assert RunDir.load(root / GOOD).state.finished
    assert sorted(p.name for p in root.iterdir()) == sorted([*DAMAGED, GOOD])     # nothing removed
    assert (root / "20250101-000000-aaaaaa-broken" / "state.json").read_text() == "{not json"


def test_clean_with_only_sound_runs_still_exits_0(runs, capsys):
    root, proc = runs
    for name in DAMAGED:
        (root / name / "state.json").write_text(json.dumps({"spec": "fattree:k=4", "finished": True}))
    assert main(["clean"]) == 0 and capsys.readouterr().err == ""
    assert proc.wait(timeout=GUARD) is not None


def test_all_runs_reports_damaged_runs_when_asked_and_leftovers_names_them(runs):
    root, _ = runs
    damaged: list[tuple[str, str]] = []
    assert [r.id for r in all_runs(root, damaged=damaged)] == [GOOD]
    assert [name for name, _ in damaged] == sorted(DAMAGED)
    for name, why in damaged:
        assert why.startswith(f"run file '{root}/{name}/state.json': ") and DAMAGED[name][1] in why, why
    with pytest.raises(UserError, match="state.json': not valid JSON"):
        all_runs(root)                                   # without the list: the first damaged file is the error
    left = cleanup.leftovers(root)                       # what tests check after a run: it names them, not raises
    assert [x for x in left if "damaged" in x] == [f"{name}: damaged run file: {why}" for name, why in damaged]
