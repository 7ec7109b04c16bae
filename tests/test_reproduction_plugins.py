"""A user's paper in dcnlab's report: reproductions as plug-ins (:mod:`dcnlab.reproduce.protocol`,
:mod:`dcnlab.reproduce.registry`), the example ``fattree-counts`` of ``examples/plugins`` installed and run by
``dcnlab reproduce all`` beside the five papers and alone, and the progress display's estimate of the time left."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dcnlab.cli import main
from dcnlab.controller import registry as algo_registry
from dcnlab.controller.registry import PluginError
from dcnlab.reproduce import registry
from dcnlab.reproduce.protocol import Reproduction
from dcnlab.results import summary
from dcnlab.sweep.progress import ETA, duration_text

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = ROOT / "examples" / "plugins"
NAME = "fattree-counts"


def dist_info(site: Path, groups: dict[str, dict[str, str]], name: str = "dcnlab-example-plugins",
              version: str = "0.1.0") -> Path:
    """Declare entry points the way ``pip install`` does: a ``.dist-info`` in ``site`` (on ``sys.path``)."""
    dist = site / f"{name.replace('-', '_')}-{version}.dist-info"
    dist.mkdir(parents=True, exist_ok=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (dist / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) for group, eps in groups.items()))
    return dist


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """``pip install -e examples/plugins`` as its pyproject.toml declares it (every entry point group), for a
    ``dcnlab`` process: the environment that finds the package and its entry points."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    meta = tomllib.loads((PLUGINS / "pyproject.toml").read_text())["project"]
    assert meta["entry-points"]["dcnlab.reproductions"] == {NAME: "dcnlab_example_plugins.paper:REPRODUCTION"}
    site = tmp_path_factory.mktemp("site")
    dist_info(site, meta["entry-points"], meta["name"], meta["version"])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), str(PLUGINS), os.environ.get("PYTHONPATH", "")]))
    return env


def dcnlab(env: dict[str, str], *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dcnlab", *args], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=1800)


def test_reproduce_all_runs_and_judges_the_users_paper_beside_the_five(installed, tmp_path):
    out = tmp_path / "report"
    r = dcnlab(installed, "reproduce", "all", "--smoke", "--emulate", "off", "--workers", "2", "--json",
               "--out", str(out), cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    printed = json.loads(r.stdout)          # --json: stdout is the one object, the progress went to stderr
    s = summary.read(out / "summary.json")
    assert set(s.seeds) == {"000", "001", "002", "003", "004", "AF08"}
    data = json.loads((out / "summary.json").read_text())
    assert list(data["parts"]) == ["aggregation", "multicast", "congestion", "cist", NAME]
    assert data["papers"]["AF08"]["title"] == "A Scalable, Commodity Data Center Network Architecture"
    mine = [h for h in s.headlines if h.seed == "AF08"]
    assert [(h.paper, h.model, h.unit, h.verdict) for h in mine] == [
        (128, 128, "hosts at k=8", "reproduced"), (16, 16, "switches at k=8", "reproduced"),
        (16, 16, "paths at k=8", "reproduced"), (4, 4, "paths at k=8", "reproduced")]
    assert all(h.plot == f"{NAME}/fattree.png" for h in mine)
    assert [h["seed"] for h in printed["headlines"]].count("AF08") == 4
    md, page = (out / "report.md").read_text(), (out / "report.html").read_text()
    assert md.startswith("# dcnlab: the six papers reproduced")
    assert "## Counting the k-ary fat-tree: AF08 fat-tree (Al-Fares et al., 2008)" in md
    assert f"({NAME}/fattree.png)" in md and f"<figcaption>{NAME}/fattree.png</figcaption>" in page
    assert "| AF08 | (k/2)² core switches | 16 | 16 |" in md
    part = summary.read(out / NAME / "summary.json")
    assert part.extra["mechanism"] == NAME and [h.statement for h in part.headlines] == [h.statement for h in mine]
    assert f"{NAME} k=" not in r.stdout and "model tasks done" in r.stderr


def test_reproduce_name_runs_the_plugin_alone(installed, tmp_path):
    r = dcnlab(installed, "reproduce", NAME, "--quick", "--json", "--out", "one", cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    printed = json.loads(r.stdout)
    assert [(h["model"], h["verdict"]) for h in printed["headlines"]] == [
        (1024, "reproduced"), (64, "reproduced"), (64, "reproduced"), (8, "reproduced")]
    assert {Path(f).name for f in printed["files"]} == {"fattree.json", "fattree.png", "summary.json"}
    assert summary.read(tmp_path / "one" / "summary.json").emulation_why == "no BMv2 experiment"
    r = dcnlab(installed, "reproduce", "--help", cwd=tmp_path)
    assert NAME in r.stdout


def test_a_wrong_figure_through_the_same_pipeline_deviates():
    """The headlines are a pure function of the figures: a fat-tree miscounted by one host is judged by the same
    rule, and fails (what a falsifier does)."""
    sys.path.insert(0, str(PLUGINS))
    try:
        from dcnlab_example_plugins.paper import REPRODUCTION, count
    finally:
        sys.path.remove(str(PLUGINS))
    right = count(4)
    assert right == {"k": 4, "hosts": 16, "core_switches": 4, "shortest_paths": 4, "edge_disjoint_paths": 2}
    assert {h.verdict for h in REPRODUCTION.headlines(None, [right], None)} == {"reproduced"}
    wrong = dict(right, hosts=15)
    assert [h.verdict for h in REPRODUCTION.headlines(None, [wrong], None)] == [
        "deviates", "reproduced", "reproduced", "reproduced"]
    assert len(REPRODUCTION.headline_ids()) == 4


@pytest.fixture
def entry_points(tmp_path, monkeypatch):
    def install(**names: str) -> None:
        dist_info(tmp_path, {"dcnlab.reproductions": names}, "user-paper", "1.0")
        algo_registry._entry_points.cache_clear()
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(PLUGINS))
    yield install
    algo_registry._entry_points.cache_clear()


def test_a_builtin_name_cannot_be_taken_and_a_broken_plugin_is_one_line(entry_points, tmp_path, capsys):
    entry_points(aggregation="dcnlab_example_plugins.paper:REPRODUCTION", all="dcnlab_example_plugins.paper:REPRODUCTION",
                 **{NAME: "dcnlab_example_plugins.paper:REPRODUCTION", "broken": "no_such_module_xyz:R",
                    "notone": "dcnlab_example_plugins.paper:PAPER"})
    assert registry.names() == ("aggregation", "multicast", "congestion", "cist", "broken", NAME, "notone")
    assert registry.get("aggregation") is not registry.get(NAME)
    assert type(registry.get("aggregation")).__module__ == "dcnlab.reproduce.aggregation.reproduction"
    assert isinstance(registry.get(NAME), Reproduction)
    with pytest.raises(PluginError, match="cannot be a reproduction: a Paper, not an instance"):
        registry.get("notone")
    with pytest.raises(PluginError, match="'broken'.*failed to load"):
        registry.get("broken")
    assert main(["reproduce", "all", "--emulate", "off", "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "'broken'" in err
    assert not (tmp_path / "x").exists()


def test_time_left_from_the_cost_estimates(monkeypatch):
    clock = [100.0]
    monkeypatch.setattr("dcnlab.sweep.progress.time.monotonic", lambda: clock[0])
    eta = ETA([60.0, 30.0, 10.0], workers=2)
    assert eta.seconds_left() == 50.0            # nothing done: the estimates on two workers
    clock[0] += 20.0
    eta.done(0)                                   # 60 of 100 cost-seconds in 20 s: 40 left take 13 s
    assert round(eta.seconds_left(), 1) == 13.3 and eta.text() == "about 13 s left"
    assert duration_text(150) == "2 min" and duration_text(3 * 3600 + 300) == "3 h 05 min"


def test_the_plugin_runs_on_a_dask_cluster_as_on_the_pool(entry_points, tmp_path, capsys):
    """``--cluster``: the tasks go to the Dask workers through the same protocol (``run_task`` pickled by name);
    the figures are the local pool's."""
    pytest.importorskip("distributed")
    from dcnlab.sweep import pool

    entry_points(**{NAME: "dcnlab_example_plugins.paper:REPRODUCTION"})
    assert main(["reproduce", NAME, "--smoke", "--json", "--workers", "2", "--out", str(tmp_path / "local")]) == 0
    local = json.loads(capsys.readouterr().out)
    with pool.local_cluster(2) as lc:
        assert main(["reproduce", NAME, "--smoke", "--json", "--cluster", lc.scheduler_address,
                     "--out", str(tmp_path / "dask")]) == 0
    remote = json.loads(capsys.readouterr().out)
    assert remote["run"]["cluster"] == lc.scheduler_address
    assert [(h["model"], h["verdict"]) for h in remote["headlines"]] == \
           [(h["model"], h["verdict"]) for h in local["headlines"]] == [(128, "reproduced"), (16, "reproduced"),
                                                                      (16, "reproduced"), (4, "reproduced")]
