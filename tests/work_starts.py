"""Where a command's real work starts, for tests that check what happens before it (no clocks).

Each of :data:`WORK_STARTS` is the first call of some command's real work (an emulation, a model sweep,
a benchmark, a compile). A test replaces each with a sentinel that ends the command with
:data:`REACHED_WORK`: a check that must come before any work (arguments, root, the toolchain) is then
shown to come first by the exit status and the output, not by how long the command took.
"""

from __future__ import annotations

WORK_STARTS = (
    "dcnlab.emu.network.FabricNetwork.start", "dcnlab.emu.cleanup.clean", "dcnlab.p4src.compiler.compile_program",
    "dcnlab.experiments.bench_emu.bring_up", "dcnlab.experiments.bench_emu.write_rates", "dcnlab.experiments.bench_chaos.run_chaos",
    "dcnlab.experiments.bench_topo.run", "dcnlab.experiments.aggregation_model.run_tasks", "dcnlab.experiments.aggregation_model.model_rows",
    "dcnlab.experiments.aggregation_bcube.run", "dcnlab.experiments.aggregation_bcube.bench_dataplane",
    "dcnlab.experiments.multicast_model.run_all", "dcnlab.experiments.multicast_model._workload",
    "dcnlab.experiments.multicast_emu.run_experiment", "dcnlab.experiments.congestion_cmd.build_scenarios",
    "dcnlab.experiments.congestion_emu.run_experiment", "dcnlab.controller.congestion.fluid.simulate",
    "dcnlab.experiments.cist_cmd.model_case", "dcnlab.experiments.cist_cmd.bench_case", "dcnlab.experiments.cist_dragonfly.run_experiment",
    "dcnlab.experiments.pool.Cluster.connect",
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
from dcnlab.experiments.cli import main
raise SystemExit(main(sys.argv[1:]))
"""
"""``python -c SENTINEL_CLI ARGV...``: ``dcnlab ARGV`` with a sentinel at every work start."""
