"""``dcnlab reproduce <mechanism>`` runs through the protocol and the runner of ``reproduce all``
(:func:`dcnlab.report.reproduce_all.run_one`): the command's own options configure the reproduction
(:meth:`dcnlab.reproduce.protocol.Reproduction.configure`) and become its tasks; no second code path runs the model.
The runner's model step is stopped at its start here, so no work runs: what reaches it is checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from dcnlab.cli import main
from dcnlab.report import reproduce_all

PLUGINS = Path(__file__).resolve().parents[1] / "examples" / "plugins" / "dcnlab_example_plugins"


class Reached(Exception):
    """The runner's model step was reached, with these parts."""


@pytest.fixture
def reached(monkeypatch):
    seen: list = []

    def stop(parts, n_workers, run, bar, cluster=None):
        seen.append((parts, run))
        raise Reached

    monkeypatch.setattr(reproduce_all, "run_model", stop)
    return seen


def _run(argv: list[str], seen: list) -> tuple:
    with pytest.raises(Reached):
        main(argv)
    assert len(seen) == 1
    (parts, run), = seen
    assert len(parts) == 1
    return parts[0], run


def test_reproduce_cist_runs_its_configured_reproduction_through_the_runner(reached, tmp_path):
    from dcnlab.reproduce.cist import model

    two = f"{PLUGINS / 'cist.py'}:two_trees"
    part, run = _run(["reproduce", "cist", "--emulate", "off", "--quick", "--seed", "3", "--algo", two,
                      "--out", str(tmp_path)], reached)
    assert part.mechanism == "cist" and part.out == tmp_path and run.mode == "quick" and run.seed == 3
    assert run.by == "dcnlab reproduce cist"
    assert [t.arg[0] for t in part.tasks] == list(model.QUICK_MODEL_SPECS)
    assert {t.arg[1:3] for t in part.tasks} == {(5, 3)}                   # 5 rounds, seed 3
    assert all(t.arg[3] == ((two, two),) for t in part.tasks)              # the user's construction, in every task
    assert part.reproduction.user_code          # named by a string: its results never come from the task cache


def test_reproduce_multicast_runs_its_own_plan_with_the_users_router(reached, tmp_path):
    from dcnlab.reproduce.multicast import model

    spt = f"{PLUGINS / 'multicast.py'}:ShortestPathTrees"
    part, run = _run(["reproduce", "multicast", "--emulate", "off", "--quick", "--algo", spt,
                      "--out", str(tmp_path)], reached)
    assert part.mechanism == "multicast" and run.by == "dcnlab reproduce multicast"
    assert [t.arg for t in part.tasks] == model.tasks_for(True, [spt])
    assert {t.arg.pattern for t in part.tasks if t.arg.algo == spt} == set(model.QUICK_PATTERNS)


def test_reproduce_aggregation_runs_only_the_parts_and_rounds_asked_for(reached, tmp_path):
    from dcnlab.reproduce.aggregation import model

    part, run = _run(["reproduce", "aggregation", "--emulate", "off", "--quick", "--only", "000-k", "003-k",
                      "--rounds", "2", "--seed", "7", "--out", str(tmp_path)], reached)
    plans = model.plans(True, 2)
    assert part.mechanism == "aggregation" and run.seed == 7 and not part.reproduction.user_code
    # --rounds 2: two rounds in all, one at each of seeds 7 and 8 (a verdict a reading decides needs 3 seeds)
    assert [t.arg for t in part.tasks] == [(p, x, 0, sd) for p in ("000-k", "003-k") for sd in (7, 8)
                                           for x in plans[p].points]
