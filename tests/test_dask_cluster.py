"""Sweeps on a Dask cluster: ``--cluster ADDRESS`` gives what the local pool gives.

A ``LocalCluster`` of two single-threaded worker processes, bound to 127.0.0.1 without a dashboard and
closed at the end, runs a quick ``reproduce aggregation`` (two parts whose rounds fan out) and
``bench rounds``; a worker that dies mid-sweep loses no round; bad ``--cluster`` input is a one-line error.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from dcnlab.reproduce.aggregation import model as am
from dcnlab.sweep import pool
from dcnlab.cli import main
from dcnlab.cli.errors import UserError

distributed = pytest.importorskip("distributed", reason="dask.distributed not installed: pip install 'dcnlab[cluster]'")

QUICK = ["reproduce", "aggregation", "--emulate", "off", "--quick", "--only", "003-k", "000-k", "--rounds", "2"]


@pytest.fixture(scope="module")
def cluster():
    # LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None),
    # its HTTP routes on 127.0.0.1 too
    lc = pool.local_cluster(2)
    try:
        addresses = [lc.scheduler_address, *(w.address for w in lc.workers.values())]
        assert all(a.startswith("tcp://127.0.0.1:") for a in addresses), addresses
        yield lc
    finally:
        lc.close()


def _headlines(path: Path) -> list[tuple[str, str, object, str]]:
    data = json.loads(path.read_text())
    return [(h["seed"], h["statement"], h["model"], h["verdict"]) for h in data["headlines"]]


def _results(path: Path) -> dict:
    """aggregation.json's results without the times."""
    def strip(x: object) -> object:
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k != "seconds"}
        return x
    return strip(json.loads(path.read_text())["results"])      # type: ignore[return-value]


def test_quick_reproduction_same_on_the_cluster_as_on_the_local_pool(cluster, tmp_path, capsys):
    assert main([*QUICK, "--workers", "2", "--out", str(tmp_path / "local")]) == 0
    assert main([*QUICK, "--cluster", cluster.scheduler_address, "--out", str(tmp_path / "dask")]) == 0
    out = capsys.readouterr().out
    assert f"Dask cluster {cluster.scheduler_address} (2 worker threads)" in out
    local, dask = _headlines(tmp_path / "local" / "summary.json"), _headlines(tmp_path / "dask" / "summary.json")
    assert local == dask
    assert any(h[2] is not None for h in local)
    assert _results(tmp_path / "local" / "aggregation.json") == _results(tmp_path / "dask" / "aggregation.json")
    meta = json.loads((tmp_path / "dask" / "aggregation.json").read_text())["meta"]
    assert meta["cluster"] == cluster.scheduler_address and meta["workers"] == 2


def _dies_once(marker: str, victim: int, index: int, *task: object) -> object:
    """The round ``victim`` kills its worker process the first time it runs (``marker`` remembers it)."""
    if index == victim and not os.path.exists(marker):
        Path(marker).write_text(str(os.getpid()))
        os._exit(1)
    return am._task(*task)          # type: ignore[arg-type]


def test_a_worker_killed_mid_sweep_loses_no_round(cluster, tmp_path):
    tasks = [("000-k", k, rnd, 5) for k in (2, 3, 4, 5) for rnd in range(4)]
    marker = tmp_path / "killed"
    victim = 6
    wrapped = [(str(marker), victim, i, *t) for i, t in enumerate(tasks)]
    with pool.Cluster(cluster.scheduler_address) as c:
        seen = list(pool.fan_out(_dies_once, wrapped))
        c.client.wait_for_workers(2, timeout=120)      # the nanny restarts the dead worker
    assert marker.exists(), "the victim round never ran"
    assert sorted(i for i, _ in seen) == list(range(len(tasks)))      # every round once, none lost
    local = pool.run_all(am._task, tasks, workers=1)
    got = pool.ordered(seen, len(tasks))
    for a, b in zip(local, got):
        assert a[:3] == b[:3] and a[3]["traffic"] == b[3]["traffic"] and a[3]["busiest"] == b[3]["busiest"]


def test_bench_rounds_side_by_side(cluster, capsys):
    assert main(["bench", "rounds", "--rounds", "4", "--size", "100", "--workers", "2", "--cluster",
                 cluster.scheduler_address, "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["identical"] is True
    local, dask = res["rows"]
    assert local["backend"] == "local process pool" and dask["address"] == cluster.scheduler_address
    assert local["rounds_per_s"] > 0 and dask["rounds_per_s"] > 0 and dask["workers"] == 2
    assert len(dask["warm_up_per_worker_s"]) == 2


@pytest.mark.parametrize("bad", ["nohost", "tcp://h:0", "tcp://h:65536", "http://h:8786", "h:port", "", "a b:1"])
def test_bad_cluster_address_is_a_one_line_usage_error(bad, capsys):
    with pytest.raises(SystemExit) as e:
        main(["reproduce", "aggregation", "--quick", "--cluster", bad])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "--cluster" in err and "tcp://HOST:PORT" in err and "\n" not in err


def test_address_forms():
    assert pool.cluster_address("127.0.0.1:8786") == "tcp://127.0.0.1:8786"
    assert pool.cluster_address("tcp://sched.lan:8786") == "tcp://sched.lan:8786"
    assert pool.cluster_address("[::1]:8786") == "tcp://[::1]:8786"


def test_unreachable_scheduler(monkeypatch, tmp_path, capsys):
    with socket.socket() as s:          # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setattr(pool, "CONNECT_TIMEOUT", 1.0)
    code = main([*QUICK, "--cluster", f"127.0.0.1:{port}", "--out", str(tmp_path / "out")])
    assert code == 2
    err = capsys.readouterr().err
    assert f"--cluster tcp://127.0.0.1:{port}: no Dask scheduler answered within 1 s" in err
    assert "Traceback" not in err


def test_without_dask_the_error_says_how_to_install_it(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "distributed", None)       # import distributed -> ImportError
    with pytest.raises(UserError, match=r"pip install 'dcnlab\[cluster\]'"):
        pool.Cluster("tcp://127.0.0.1:1").connect()
    assert main([*QUICK, "--cluster", "127.0.0.1:1", "--out", str(tmp_path / "out")]) == 2
    assert pool.INSTALL_HINT in capsys.readouterr().err


def test_import_dcnlab_does_not_import_dask():
    code = ("import sys; from dcnlab.cli import build_parser; build_parser(); "
            "import dcnlab.sweep.pool, dcnlab.bench.rounds; "
            "assert not {'dask', 'distributed'} & set(sys.modules), sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_cist_reproduction_same_on_the_cluster_as_locally(cluster, tmp_path, capsys):
    """``reproduce cist --cluster``: one task per Dragonfly on the workers, the same sweeps as here."""
    assert main(["reproduce", "cist", "--emulate", "off", "--quick", "--workers", "2",
                 "--out", str(tmp_path / "local")]) == 0
    assert main(["reproduce", "cist", "--emulate", "off", "--quick", "--cluster", cluster.scheduler_address,
                 "--out", str(tmp_path / "dask")]) == 0
    out = capsys.readouterr().out
    assert f"model on Dask cluster {cluster.scheduler_address} (2 worker threads)" in out

    def cases(which: str) -> list[dict]:
        found = json.loads((tmp_path / which / "model.json").read_text())
        return [{k: v for k, v in c.items() if "second" not in k and "time" not in k} for c in found]

    local, dask = cases("local"), cases("dask")
    assert [c["spec"] for c in dask] == [c["spec"] for c in local] and len(local) == 43     # the quick sweep
    assert local == dask


def test_cist_workers_and_cluster_do_not_go_together(capsys):
    assert main(["reproduce", "cist", "--quick", "--workers", "2", "--cluster", "127.0.0.1:1"]) == 2
    assert "--workers and --cluster do not go together" in capsys.readouterr().err
