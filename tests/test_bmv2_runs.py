"""Each BMv2 experiment repeated (:mod:`dcnlab.results.runs`, :func:`dcnlab.report.reproduce_all.emulate_all`): 3 runs
in a full run, 1 in a quick one, ``--bmv2-runs N`` in any mode; each BMv2 figure the mean over the runs with its
standard error and each run's figure, its verdict judged again (``unstable`` when the runs straddle an edge).

The runner is driven with a small reproduction whose BMv2 experiment gives another figure on each call (no BMv2)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from dcnlab.cli import main
from dcnlab.report import reproduce_all
from dcnlab.report.write import emulation_text
from dcnlab.reproduce.protocol import Emulation, Finished, Reproduction, Task
from dcnlab.results import summary
from dcnlab.results.papers import Paper
from dcnlab.results.runs import BMV2_RUNS, combine_runs, run_dir
from dcnlab.results.summary import Headline, quantile

# -- the combiner, on hand-made headlines --------------------------------------------------------------------------


def ratio(fig: float | None, **kw: Any) -> Headline:
    """A ratio the paper states as 1.0 (reproduced within 0.9..1.1), its model figure 1.0, BMv2's ``fig``."""
    return Headline("X1", "the share is even", 1.0, 1.0, emulated=True, emulation=fig, kind="ratio", **kw)


def model_only() -> Headline:
    return Headline("X1", "a model-only count", 4, 4, kind="count")


def test_the_mean_its_standard_error_and_each_run():
    runs = {str(i): [ratio(x), model_only()] for i, x in enumerate((1.0, 1.01, 0.99), 1)}
    h, other = combine_runs(runs)
    assert h.emulation == pytest.approx(1.0)
    assert h.emulation_spread == pytest.approx(math.sqrt((0.01 ** 2 * 2) / 2 / 3))      # 0.00577
    assert h.emulation_spread_n == 3 and h.emulation_runs == {"1": 1.0, "2": 1.01, "3": 0.99}
    assert h.emulation_verdict == "reproduced" and h.verdict == "reproduced"   # 1 ± 4.30 x 0.0058 inside 0.9..1.1
    assert "the mean over 3 BMv2 runs (run 1: 1, run 2: 1.01, run 3: 0.99)" in h.reading
    assert other is runs["1"][1]        # no BMv2 figure: as it was
    assert emulation_text(h) == "1 ±0.0248 over 3 BMv2 runs"


def test_runs_that_straddle_an_edge_are_unstable():
    """Run 1 alone deviates (0.85 is outside 0.9..1.1); over three runs (0.85, 1.0, 1.05) the 95% interval,
    0.967 ± 4.30 x 0.060, straddles 0.9: unstable, not the verdict of whichever run came first."""
    runs = {"1": [ratio(0.85)], "2": [ratio(1.0)], "3": [ratio(1.05)]}
    assert runs["1"][0].emulation_verdict == "deviates"
    (h,) = combine_runs(runs)
    assert h.emulation == pytest.approx(0.96667, abs=1e-4) and h.emulation_spread == pytest.approx(0.06009, abs=1e-4)
    lo, hi = h.emulation - quantile(3) * h.emulation_spread, h.emulation + quantile(3) * h.emulation_spread
    assert lo < 0.9 < hi
    assert h.emulation_verdict == "unstable"
    assert h.verdict == "model only"        # the model's 1.0 holds, BMv2's does not
    assert h.difference == pytest.approx(-3.333, abs=1e-3)       # against the mean, not run 1's -15%


def test_a_single_run_leaves_the_headlines_as_they_are():
    heads = [ratio(0.85, emulation_spread=0.01, emulation_spread_n=20), model_only()]
    assert combine_runs({"1": heads}) == heads
    assert combine_runs({}) == []


def test_the_runs_spread_replaces_one_within_a_run_and_the_reading_says_so():
    """000's waiting time has a spread within one run (its jobs); over 2 runs or more the runs' spread replaces it."""
    runs = {"1": [ratio(1.0, emulation_spread=0.2, emulation_spread_n=20, reading="BMv2 per job")],
            "2": [ratio(1.02, emulation_spread=0.2, emulation_spread_n=20, reading="BMv2 per job")]}
    assert runs["1"][0].emulation_verdict == "unstable"      # 1 ± 2.09 x 0.2 straddles both edges
    (h,) = combine_runs(runs)
    assert h.emulation_spread == pytest.approx(0.01) and h.emulation_spread_n == 2
    assert h.emulation_verdict == "unstable"       # 2 runs: t = 12.7, 1.01 ± 0.127 still straddles 1.1
    assert h.reading.startswith("BMv2 per job; BMv2: the mean over 2 BMv2 runs")
    assert "it replaces the standard error within one run (0.2, over 20)" in h.reading


def test_a_figure_in_one_run_only_is_that_runs_headline():
    runs = {"1": [ratio(None)], "2": [ratio(1.03)], "3": [ratio(None)]}
    (h,) = combine_runs(runs)
    assert h is runs["2"][0] and h.emulation_runs is None and h.emulation_spread is None


def test_the_runs_figures_go_through_summary_json(tmp_path):
    (h,) = combine_runs({"1": [ratio(0.85)], "2": [ratio(1.0)], "3": [ratio(1.05)]})
    path = summary.write(tmp_path / "summary.json", ["X1"], [h], True, "3 BMv2 runs")
    data = json.loads(path.read_text())["headlines"][0]
    assert data["emulation_runs"] == {"1": 0.85, "2": 1.0, "3": 1.05} and data["emulation_spread_n"] == 3
    back = summary.read(path).headlines[0]
    assert back == h and back.emulation_verdict == "unstable"


def test_run_directories():
    assert [run_dir(i) for i in (1, 2, 3)] == [".", "bmv2-run-2", "bmv2-run-3"]
    with pytest.raises(ValueError):
        run_dir(0)


# -- the runner, with a reproduction whose BMv2 experiment gives another figure each call ------------------------


def _task(arg: Any) -> Any:
    return arg


class Varying(Reproduction):
    """One headline (a ratio the paper states as 1.0); its BMv2 experiment gives ``figures[i]`` on call i, writes
    ``emu.json`` into the directory it is given and raises on the calls in ``fail_on`` (counted from 1)."""

    name = "varying"
    title = "BMv2 figures that vary"
    papers = (Paper(id="VR01", name="A test paper", label="vr", authors=("A. Tester",), year=2024),)
    has_emulation = True
    user_code = True        # its task runs in this process with --workers 1, never from dcnlab's cache
    run_task = staticmethod(_task)

    def __init__(self, figures: tuple[float, ...] = (0.85, 1.0, 1.05, 0.95), fail_on: tuple[int, ...] = ()) -> None:
        self.figures, self.fail_on = figures, fail_on
        self.calls: list[Path] = []

    def tasks(self, mode: str, seed: int | None) -> list[Task]:
        return [Task("one", 1.0, 0.1, user=True)]

    def finish(self, out, run, tasks, results):  # type: ignore[no-untyped-def]
        return Finished({"model": results[0]})

    def headlines(self, out, model, emulation, model_why=""):  # type: ignore[no-untyped-def]
        return [Headline("VR01", "the share is even", 1.0, model["model"] if model else None, emulated=True,
                         emulation=emulation["share"] if emulation else None, kind="ratio", unit="share")]

    def emulate(self, out: Path, quick: bool, say: Any) -> Emulation:
        self.calls.append(out)
        n = len(self.calls)
        say(f"call {n}")
        (out / "emu.json").write_text(json.dumps({"call": n}))
        if n in self.fail_on:
            raise RuntimeError(f"switch lost on call {n}")
        return Emulation({"share": self.figures[n - 1]}, f"ran (call {n})", True, [out / "emu.json"])


def run(tmp_path: Path, mode: str, runs: int | None = None, **kw: Any) -> tuple[Varying, reproduce_all.AllRun]:
    rep = Varying(**kw)
    (tmp_path / "out").mkdir(parents=True)        # as the command makes it (dcnlab.results.outputs.output_dir)
    done = reproduce_all.run_one(rep, tmp_path / "out", mode, "on", 1, None, None, (True, "test: BMv2 present"),
                                 runs)
    return rep, done


def test_a_full_run_runs_bmv2_three_times_and_combines_them(tmp_path, capsys):
    rep, done = run(tmp_path, "full")
    out = tmp_path / "out"
    assert BMV2_RUNS == 3 and rep.calls == [out, out / "bmv2-run-2", out / "bmv2-run-3"]
    assert [json.loads((d / "emu.json").read_text())["call"] for d in rep.calls] == [1, 2, 3]   # none overwritten
    data = json.loads((out / "summary.json").read_text())
    (h,) = data["headlines"]
    assert h["emulation_runs"] == {"1": 0.85, "2": 1.0, "3": 1.05} and h["emulation_spread_n"] == 3
    assert h["emulation"] == pytest.approx(0.96667, abs=1e-4) and h["emulation_spread"] == pytest.approx(0.0601, abs=1e-4)
    assert h["emulation_verdict"] == "unstable" and h["verdict"] == "model only"
    assert data["bmv2_runs"] == {"1": ".", "2": "bmv2-run-2", "3": "bmv2-run-3"}
    assert data["emulation"]["why"] == "3 BMv2 runs: run 1: ran (call 1); run 2: ran (call 2); run 3: ran (call 3)"
    assert done.heads[0].emulation_runs == {"1": 0.85, "2": 1.0, "3": 1.05} and not done.bad
    assert done.run["bmv2_runs"] == 3
    err = capsys.readouterr().err
    for i in (1, 2, 3):        # one progress line per run
        assert sum(line.startswith(f"varying (BMv2 run {i} of 3): ") for line in err.splitlines()) == 1, err
        assert f"  varying (BMv2 run {i} of 3): call {i}" in err
    assert set(done.outcome.emulation_files) == {d / "emu.json" for d in rep.calls}


def test_a_quick_run_runs_bmv2_once_as_before(tmp_path, capsys):
    rep, _ = run(tmp_path, "quick")
    out = tmp_path / "out"
    assert rep.calls == [out] and not (out / "bmv2-run-2").exists()
    (h,) = summary.read(out / "summary.json").headlines
    assert h.emulation == 0.85 and h.emulation_runs is None and h.emulation_spread is None
    assert h.emulation_verdict == "deviates"
    assert "bmv2_runs" not in json.loads((out / "summary.json").read_text())
    assert "varying (BMv2): " in capsys.readouterr().err


def test_bmv2_runs_asks_for_more_in_any_mode(tmp_path):
    rep, _ = run(tmp_path, "quick", 2)
    out = tmp_path / "out"
    assert rep.calls == [out, out / "bmv2-run-2"]
    assert json.loads((out / "bmv2-run-2" / "emu.json").read_text()) == {"call": 2}
    (h,) = summary.read(out / "summary.json").headlines
    assert h.emulation_runs == {"1": 0.85, "2": 1.0} and h.emulation_spread_n == 2
    assert h.emulation == pytest.approx(0.925)
    rep, _ = run(tmp_path / "full1", "full", 1)
    assert len(rep.calls) == 1


def test_a_failed_run_fails_the_part_and_the_others_still_run(tmp_path, capsys):
    rep, done = run(tmp_path, "full", fail_on=(2,))
    out = tmp_path / "out"
    assert len(rep.calls) == 3 and done.bad == ["varying"]
    data = json.loads((out / "summary.json").read_text())
    (h,) = data["headlines"]
    assert h["emulation_runs"] == {"1": 0.85, "3": 1.05} and h["emulation_spread_n"] == 2
    assert "run 2: failed on BMv2 run 2 of 3: RuntimeError: switch lost on call 2" in data["emulation"]["why"]
    assert done.outcome.emulation_ok is False
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("varying (BMv2 run 2 of 3)")]
    assert len(lines) == 1 and "RuntimeError: switch lost on call 2" in lines[0]


def test_bad_counts_are_refused_before_any_work(tmp_path):
    with pytest.raises(ValueError, match="--bmv2-runs 0; valid: an integer of 1 or more"):
        run(tmp_path, "full", 0)
    assert not (tmp_path / "out" / "summary.json").exists()
    assert reproduce_all.bmv2_runs("full") == 3 and reproduce_all.bmv2_runs("quick") == 1
    assert reproduce_all.bmv2_runs("smoke", 4) == 4


# -- the option --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["all", "congestion", "cist", "aggregation", "multicast"])
@pytest.mark.parametrize("value", ["0", "-1", "x", "2.5"])
def test_a_bad_bmv2_runs_is_one_line_before_any_work(command, value, tmp_path, capsys):
    out = tmp_path / "o"
    with pytest.raises(SystemExit) as e:
        main(["reproduce", command, "--bmv2-runs", value, "--out", str(out)])
    err = capsys.readouterr().err
    assert e.value.code == 2
    assert err.count("\n") == 1 and "argument --bmv2-runs:" in err and "valid: 1..100" in err
    assert not out.exists()


class Reached(Exception):
    pass


@pytest.mark.parametrize("argv", [["all"], ["all", "--quick"], ["congestion", "--quick"], ["cist"]])
def test_the_option_reaches_the_runner(argv, monkeypatch, tmp_path):
    seen: list[Any] = []

    def stop(*args: Any, **kw: Any) -> None:
        seen.append(args)
        raise Reached

    monkeypatch.setattr(reproduce_all, "run", stop)
    monkeypatch.setattr(reproduce_all, "run_one", stop)
    for extra, want in (([], None), (["--bmv2-runs", "2"], 2)):
        with pytest.raises(Reached):
            main(["reproduce", *argv, "--emulate", "off", "--out", str(tmp_path / "o"), *extra])
        assert seen.pop()[-1] == want


def test_the_report_shows_bmv2_with_its_interval_and_what_it_is_over(tmp_path):
    from dcnlab.report.parts import PartRun
    from dcnlab.report.write import write_report

    (h,) = combine_runs({"1": [ratio(0.85)], "2": [ratio(1.0)], "3": [ratio(1.05)]})
    part = PartRun("varying", tmp_path / "varying", rep=Varying(), emulation={"share": 0.85},
                   emulation_why="3 BMv2 runs: run 1: ran; run 2: ran; run 3: ran")
    facts = {"mode": "full", "date": "today", "wall_seconds": 1.0, "workers": 1, "cpus": 2, "model_seconds": 0.5,
             "seed": None, "emulate": "on", "emulation_why": "test"}
    md, page, js = write_report(tmp_path, [part], [h], facts)
    shown = "0.967 ±0.259 over 3 BMv2 runs"       # 0.9667 ± 4.30 x 0.0601
    assert emulation_text(h) == shown
    assert f"| {shown} | " in md.read_text() and f"<td class=num>{shown}</td>" in page.read_text()
    assert json.loads(js.read_text())["headlines"][0]["emulation_runs"] == {"1": 0.85, "2": 1.0, "3": 1.05}
