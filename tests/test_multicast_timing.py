"""001's speed headlines are CPU times: timed alone, several times, each a mean with its spread, so a speed-up
within the noise is not judged a trend (one timing in the pool was judged as if it had no randomness)."""

from __future__ import annotations

import json

import pytest

from dcnlab.reproduce.multicast import headlines, timing
from dcnlab.results.summary import Headline

SPEED_STATEMENT = ("C-MR4LMS up to 94% faster than MR4LMS (100×50×26, 4 ppn: < 35 s vs > 575 s; Fig. 10(f))")


def _heads():
    return [Headline("001", SPEED_STATEMENT, 94.0, 48.0, unit="%", kind="percent", direction="up", reference=0.0),
            Headline("001", "C-MR4LMS computes 100×50×26 (4 ppn) in under 35 s (Fig. 10(f))", 35.0, 1.3,
                     unit="s", kind="trend", direction="down"),
            Headline("001", "MR4LMS average TFI 1.1 on 100×50×26 (4 ppn, §4.3)", 1.1, 1.1, kind="ratio")]


def _timing(speeds, slow):
    return {"pattern": timing.PATTERN, "repeats": len(speeds), "speed_percent": speeds, "slower_cmr4lms": slow,
            "seconds": {}}


def test_a_speed_up_within_the_noise_is_flat_not_a_trend():
    speed, fast, other = headlines.timed(_heads(), _timing([2.0, -1.5, 3.0], [1.2, 1.3, 1.25]))
    assert speed.model == pytest.approx(3.5 / 3) and speed.spread_of == "3 timings" and speed.spread_n == 3
    assert speed.verdict == "flat"
    assert fast.model == pytest.approx(1.25) and fast.verdict == "reproduced"
    assert other.model == 1.1       # no other headline is touched


def test_the_papers_speed_up_over_every_timing_is_reproduced_and_a_tie_is_not():
    speed, *_ = headlines.timed(_heads(), _timing([93.0, 95.0, 94.0], [30.0, 31.0, 29.0]))
    assert speed.verdict == "reproduced"
    speed, *_ = headlines.timed(_heads(), _timing([0.0, 0.0, 0.0], [1.0, 1.0, 1.0]))   # X is Y: not faster
    assert speed.verdict in ("deviates", "flat")


def test_without_a_timing_the_pools_figures_stay():
    assert [h.model for h in headlines.timed(_heads(), None)] == [48.0, 1.3, 1.1]


def test_measure_alone_times_the_pattern_when_the_model_ran_it(tmp_path, monkeypatch):
    from dcnlab.reproduce import registry
    from dcnlab.reproduce.protocol import Run

    calls = []
    monkeypatch.setattr(timing, "measure", lambda quick, say=None, repeats=None: calls.append(quick) or
                        _timing([1.0, 2.0, 3.0], [1.0, 1.0, 1.0]))
    rep = registry.get("multicast")
    (tmp_path / "multicast.json").write_text(json.dumps({"rows": [{"pattern": "64x32x16", "algo": "mr4lms"}]}))
    assert rep.measure_alone(tmp_path, Run("quick")) == [] and calls == []      # the pattern did not run
    (tmp_path / "multicast.json").write_text(json.dumps({"rows": [{"pattern": timing.PATTERN, "algo": "mr4lms"}]}))
    assert rep.measure_alone(tmp_path, Run("smoke")) == [] and calls == []
    assert rep.measure_alone(tmp_path, Run("quick")) == [tmp_path / timing.FILE] and calls == [True]
    assert timing.load(tmp_path)["speed_percent"] == [1.0, 2.0, 3.0]


def test_measure_times_each_algorithm_in_turns(monkeypatch):
    from dcnlab.controller.multicast import planning
    from dcnlab.reproduce.multicast import model

    order = []
    monkeypatch.setattr(model, "_workload", lambda pattern: (None, None))
    monkeypatch.setattr(planning, "plan_metrics", lambda h, wl, algo, colors: order.append(algo))
    data = timing.measure(True, repeats=2)
    assert order == list(timing.ALGOS) * 2 and data["repeats"] == 2
    assert len(data["speed_percent"]) == 2 and all(len(v) == 2 for v in data["seconds"].values())


def test_001_starred_reading_is_the_headlines_mean_over_its_draws(monkeypatch):
    """The starred MR4LMS reading ran one draw where the headline is the mean over 5: it now runs the headline's
    draws (seeds 1..5), its figure their mean."""
    from dcnlab.reproduce.multicast import model as mm
    from dcnlab.reproduce.multicast import readings as m

    assert m.DRAWS == mm.DRAWS
    seen = []

    def fake(name, pattern, spec, colors):
        seen.append((name, pattern))
        seed = int(pattern.split("seed=")[1].split(":")[0])
        return name, 500 + seed, 3, 0.1, 1000, 5000

    monkeypatch.setattr(m, "_run", fake)
    monkeypatch.setattr(m, "run_all", lambda fn, tasks, workers, **kw: [fn(*t) for t in tasks])
    m._runs.cache_clear()
    m._starred.cache_clear()
    try:
        rs = m.readings(False, 1)
    finally:
        m._runs.cache_clear()
        m._starred.cache_clear()
    star = next(r for r in rs if r.default)
    assert star.reading == "mr4lms" and star.value == pytest.approx(503.0)     # mean of 501..505
    assert [p for n, p in seen if n == "mr4lms"][-5:] == [f"random:1000:seed={d}:ppn=4" for d in range(1, 6)]
    other = next(r for r in rs if r.reading == "same-color")
    assert other.value == 501 and "draw 1 (seed 1) only" in other.description


def test_each_timing_is_a_seed_of_a_verdict_a_reading_decides():
    from dataclasses import replace

    heads = [replace(h, depends_on="join-order") for h in _heads()]
    speed, *_ = headlines.mark(headlines.timed(heads, _timing([10.0, 12.0, 13.0], [1.0, 1.0, 1.0])), {})
    assert speed.seeds == {"1": 10.0, "2": 12.0, "3": 13.0} and speed.verdict == "trend"
    speed, *_ = headlines.timed(heads, _timing([10.0, 10.5], [1.0, 1.0]))
    assert speed.verdict == "unstable"          # two timings are not three seeds
    speed, *_ = headlines.timed(heads, _timing([10.0, 12.0, -1.0], [1.0, 1.0, 1.0]))
    assert speed.verdict in ("unstable", "flat")    # one timing not faster: the trend does not hold at every one
