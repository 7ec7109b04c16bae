"""Where a command's real work starts, for tests that check what happens before it (no clocks).

Each of :data:`WORK_STARTS` is the first call of some command's real work (an emulation, a model sweep,
a benchmark, a compile). A test replaces each with a sentinel that ends the command with
:data:`REACHED_WORK`: a check that must come before any work (arguments, root, the toolchain) is then
shown to come first by the exit status and the output, not by how long the command took.
"""

from __future__ import annotations

WORK_STARTS = (
    "dcnlab.emu.network.FabricNetwork.start", "dcnlab.emu.cleanup.clean", "dcnlab.p4src.compiler.compile_program",
    "dcnlab.bench.emu.bring_up", "dcnlab.bench.emu.write_rates", "dcnlab.bench.chaos.run_chaos",
    "dcnlab.bench.topo.run", "dcnlab.reproduce.aggregation.model.run_tasks", "dcnlab.reproduce.aggregation.bench.model_rows",
    "dcnlab.report.reproduce_all.run_model", "dcnlab.reproduce.aggregation.bench.bench_dataplane",
    "dcnlab.reproduce.multicast.model._workload",
    "dcnlab.reproduce.multicast.bmv2.run_experiment", "dcnlab.reproduce.congestion.model.build_scenarios",
    "dcnlab.reproduce.congestion.bmv2.run_experiment", "dcnlab.controller.congestion.fluid.simulate",
    "dcnlab.reproduce.cist.model.model_case", "dcnlab.reproduce.cist.bench.bench_case", "dcnlab.reproduce.cist.bmv2.run_experiment",
    "dcnlab.sweep.pool.Cluster.connect",
)
"""Where real work starts: a sentinel put in each ends the command with :data:`REACHED_WORK`."""
REACHED_WORK = 99
WORK_MARKER = "dcnlab test: reached work"
"""What the sentinel of :data:`SENTINEL_CLI` prints on stderr before it exits with :data:`REACHED_WORK`."""

SENTINEL_CLI = f"""\
import os, sys
from _pytest.monkeypatch import MonkeyPatch
def _reached(*args, **kwargs):
    sys.stdout.flush()
    sys.stderr.write({WORK_MARKER!r} + "\\n")
    sys.stderr.flush()
    os._exit({REACHED_WORK})
mp = MonkeyPatch()
for target in {WORK_STARTS!r}:
    mp.setattr(target, _reached)
from dcnlab.cli import main
raise SystemExit(main(sys.argv[1:]))
"""
"""``python -c SENTINEL_CLI ARGV...``: ``dcnlab ARGV`` with a sentinel at every work start."""
