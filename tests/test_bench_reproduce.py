"""``dcnlab bench reproduce``: CPU seconds per part and task kind of reproduce all's model parts, and the goal
(its smoke mode: the shape of the output, never a time)."""

from __future__ import annotations

import json
import re

import pytest
from test_bench_verdicts import verdict_lines

from dcnlab.bench.reproduce import GOALS, makespan
from dcnlab.cli import main
from dcnlab.reproduce import registry


def test_makespan_longest_first():
    assert makespan([2, 2, 3, 3, 2], 2) == 7          # 3|3, then 2 on each, the last 2 on either
    assert makespan([5, 1, 1], 2) == 5 and makespan([1.5], 4) == 1.5 and makespan([], 2) == 0


def test_smoke_output_shape(capsys):
    assert main(["bench", "reproduce", "--smoke", "--workers", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r"reproduce all --smoke, model parts: \d+ tasks on 1 processes \(load average [\d.]+ on "
                        r"\d+ cores\)", out[0])
    assert out[1].split() == ["part", "/", "task", "kind", "tasks", "CPU", "s", "longest", "s", "done", "at", "s"]
    parts = {ln.split()[0]: ln for ln in out[2:] if re.match(r"\S+\s+\d+\s+[\d.]+\s+[\d.]+$", ln)}
    assert set(parts) == set(registry.names())
    kinds = [ln for ln in out if re.fullmatch(r"  \S+\s+\d+\s+[\d.]+\s+[\d.]+", ln)]
    assert len(kinds) >= len(parts)
    assert sum(int(ln.split()[1]) for ln in kinds) == sum(int(ln.split()[1]) for ln in parts.values()) == \
        int(out[0].split()[5])
    assert re.fullmatch(r"total: [\d.]+ CPU s in the tasks, [\d.]+ CPU s in all processes \(warm-up [\d.]+ s\); "
                        r"wall [\d.]+ s on 1 processes on this machine now", out[-2])
    assert re.fullmatch(r"on 2 idle cores \(the tasks' CPU seconds, longest first\): about \d+ s: "
                        rf"(ok|MISS) \(goal <= {GOALS['smoke']:.0f} s\)", out[-1])
    assert verdict_lines("\n".join(out)) == [out[-1]]


def test_help_names_the_goals(capsys):
    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "reproduce" in text and "--quick <= 60 s" in text and "full <= 600 s" in text


def test_json(capsys):
    assert main(["bench", "reproduce", "--smoke", "--workers", "1", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["mode"] == "smoke" and res["goal_s"] == GOALS["smoke"] and isinstance(res["ok"], bool)
    assert res["tasks"] == sum(p["tasks"] for p in res["parts"]) == sum(k["tasks"] for p in res["parts"]
                                                                         for k in p["kinds"])
    assert res["task_cpu_s"] > 0 and res["idle_wall_s"] >= max(k["longest_s"] for p in res["parts"]
                                                                for k in p["kinds"])
