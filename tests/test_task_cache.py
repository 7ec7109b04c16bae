"""The content cache of model task results (:mod:`dcnlab.sweep.cache`): a stored result is served only for the
same task and the same code, never for a plug-in's, never with the cache off."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import dcnlab
from dcnlab.bench.reproduce import makespan
from dcnlab.sweep import cache, pool

TASKS = [([3.0, 2.0, 1.0], 2), ([5.0, 1.0], 1), ([4.0, 4.0, 4.0], 3)]
WANT = [3.0, 6.0, 4.0]


@pytest.fixture
def on(tmp_path, monkeypatch):
    """The cache on, in a directory of its own; every call of the pool's fan_out recorded."""
    monkeypatch.setenv(cache.OFF_ENV, "0")
    monkeypatch.setenv(cache.DIR_ENV, str(tmp_path / "cache"))
    ran: list[list[tuple]] = []
    real = pool.fan_out

    def spy(fn, tasks, workers=None, cluster=None, warm=None):
        ran.append(list(tasks))
        yield from real(fn, tasks, 1, cluster, warm)

    monkeypatch.setattr(pool, "fan_out", spy)
    return ran


def results(fn, tasks) -> list:
    got = dict(cache.fan_out(fn, tasks, 1))
    return [got[i] for i in range(len(tasks))]


def test_second_run_is_served_from_the_cache(on, tmp_path):
    assert results(makespan, TASKS) == WANT
    assert on == [TASKS]
    assert len(list((tmp_path / "cache").rglob("*.pkl"))) == 3
    assert results(makespan, TASKS) == WANT
    assert on == [TASKS]                         # nothing ran the second time
    assert results(makespan, [*TASKS, ([1.0], 1)]) == [*WANT, 1.0]
    assert on[-1] == [([1.0], 1)]                # only the new task ran


def test_other_code_is_another_key(on, monkeypatch):
    results(makespan, TASKS[:1])
    monkeypatch.setattr(cache, "code_version", lambda: "another version of dcnlab")
    assert results(makespan, TASKS[:1]) == WANT[:1]
    assert len(on) == 2                          # computed again, not served from the other version's results


def test_code_version_follows_every_source_file(tmp_path, monkeypatch):
    pkg = tmp_path / "dcnlab"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "model.py").write_text("X = 1\n")
    monkeypatch.setattr(dcnlab, "__file__", str(pkg / "__init__.py"))
    versions = []
    for text in ("X = 1\n", "X = 2\n", "X = 1\n"):
        (pkg / "sub" / "model.py").write_text(text)
        cache.code_version.cache_clear()
        versions.append(cache.code_version())
    cache.code_version.cache_clear()
    assert versions[0] != versions[1] and versions[0] == versions[2]


def test_a_task_naming_outside_code_always_runs(on, tmp_path):
    tasks = [("a",), ("b",)]
    assert results(os.path.basename, tasks) == ["a", "b"]
    assert results(os.path.basename, tasks) == ["a", "b"]
    assert on == [tasks, tasks]
    assert cache.task_key(os.path.basename, ("a",)) is None
    assert cache.task_key(makespan, ([1.0], 1, Path)) is not None
    assert cache.task_key(makespan, ([1.0], 1, subprocess.run)) is None     # an argument naming outside code
    assert not list((tmp_path / "cache").rglob("*.pkl"))


def test_off_runs_everything_and_stores_nothing(on, monkeypatch, tmp_path):
    monkeypatch.setenv(cache.OFF_ENV, "1")
    assert results(makespan, TASKS) == WANT
    assert results(makespan, TASKS) == WANT
    assert on == [TASKS, TASKS]
    assert not (tmp_path / "cache").exists()


def test_a_damaged_entry_is_computed_again(on, tmp_path):
    results(makespan, TASKS[:1])
    entry = next((tmp_path / "cache").rglob("*.pkl"))
    entry.write_bytes(b"not a pickle")
    assert results(makespan, TASKS[:1]) == WANT[:1]
    assert len(on) == 2


def test_old_versions_are_pruned(on, monkeypatch, tmp_path):
    for v in range(cache.KEEP + 2):
        monkeypatch.setattr(cache, "code_version", lambda v=v: f"version {v}")
        results(makespan, TASKS[:1])
        os.utime(cache.Store(cache.root()).dir, (v + 1, v + 1))     # older first
    kept = sorted(d.name for d in (tmp_path / "cache").iterdir())
    assert len(kept) == cache.KEEP


def test_keys_of_the_reproductions_tasks_do_not_depend_on_the_process():
    """Every model task of dcnlab's reproductions is cacheable, and its key is the same in another process
    (string hashing is salted per process)."""
    code = ("from dcnlab.reproduce import registry\nfrom dcnlab.reproduce.protocol import execute\n"
            "from dcnlab.sweep import cache\n"
            "for name in ('aggregation', 'multicast', 'congestion', 'cist'):\n"
            "    rep = registry.get(name)\n"
            "    for t in rep.tasks('smoke', None):\n"
            "        print(name, cache.task_key(execute, (rep.run_task, t.arg)))\n")
    outs = [subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=300,
                           env={**os.environ, "PYTHONHASHSEED": seed}) for seed in ("1", "2")]
    for r in outs:
        assert r.returncode == 0, r.stderr
    lines = outs[0].stdout.splitlines()
    assert len(lines) > 10 and not any(ln.endswith(" None") for ln in lines)
    assert outs[0].stdout == outs[1].stdout


@pytest.mark.parametrize("flag,off", [([], "0"), (["--no-cache"], "1")])
def test_reproduce_all_no_cache_turns_it_off(flag, off, tmp_path, monkeypatch):
    """``reproduce all --no-cache``: every model task computed (the cache is off while the run runs)."""
    from dcnlab.cli import main
    from dcnlab.report import reproduce_all

    monkeypatch.setenv(cache.OFF_ENV, "0")
    seen = []

    class Stop(Exception):
        pass

    def run(*args, **kwargs):
        seen.append(cache.enabled())
        raise Stop

    monkeypatch.setattr(reproduce_all, "run", run)
    try:
        main(["reproduce", "all", "--smoke", "--emulate", "off", "--out", str(tmp_path / "out"), *flag])
    except Stop:
        pass
    assert seen == [off == "0"]
