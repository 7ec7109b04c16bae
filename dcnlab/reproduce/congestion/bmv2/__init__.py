"""Bandwidth partition by IB-style congestion control on BMv2: IB CC partitioning (Zhang et al.), §5, Figs. 3 and 5.

Modules, in dependency order (the decisions, ours where the paper's hardware has no counterpart, stand in the module
each concerns):

* :mod:`~dcnlab.reproduce.congestion.bmv2.config` — :class:`EmuConfig`, the time scale, timer, CCT limit, marking;
* :mod:`~dcnlab.reproduce.congestion.bmv2.plans` — the scenarios (a), (b), (c) as plans, the model's prediction;
* :mod:`~dcnlab.reproduce.congestion.bmv2.testbed` — the fabric, its bottleneck queue and marking, niceness;
* :mod:`~dcnlab.reproduce.congestion.bmv2.runs` — one scenario on the testbed, measured as a :class:`ModelResult`;
* :mod:`~dcnlab.reproduce.congestion.bmv2.checks` — the defect checks and BMv2's figures, disturbed runs told apart;
* :mod:`~dcnlab.reproduce.congestion.bmv2.experiment` — :func:`run_experiment`: every scenario, disturbed ones again;
* :mod:`~dcnlab.reproduce.congestion.bmv2.report` — the table of the checks, the JSON and the plots.
"""

from dcnlab.reproduce.congestion.bmv2.checks import (
                                                      DISTURBED_LOAD_PER_CPU,
                                                      MAX_CC_LOSS,
                                                      Check,
                                                      ExperimentResult,
                                                      defect_band,
                                                      disturbed,
                                                      in_band,
                                                      smoothed_jain,
                                                      summarize,
)
from dcnlab.reproduce.congestion.bmv2.config import (
                                                      DEFAULT_TIMER,
                                                      IB_PACKET_BYTES,
                                                      EmuConfig,
                                                      quick,
)
from dcnlab.reproduce.congestion.bmv2.experiment import run_experiment, wait_for_quiet
from dcnlab.reproduce.congestion.bmv2.plans import (
                                                      fairness_plan,
                                                      model_config,
                                                      plans,
                                                      pps,
                                                      predict,
                                                      ratio_plan,
                                                      tenant_plan,
)
from dcnlab.reproduce.congestion.bmv2.report import (
                                                      plot,
                                                      summary_lines,
                                                      summary_table,
                                                      write_outputs,
)
from dcnlab.reproduce.congestion.bmv2.runs import EmuRun, measured_result, run_plan
from dcnlab.reproduce.congestion.bmv2.testbed import Testbed, renice, testbed

__all__ = ["DEFAULT_TIMER", "DISTURBED_LOAD_PER_CPU", "IB_PACKET_BYTES", "MAX_CC_LOSS", "Check",
           "EmuConfig", "EmuRun", "ExperimentResult", "Testbed", "defect_band", "disturbed", "fairness_plan", "in_band", "measured_result", "model_config", "plans", "plot", "pps", "predict", "quick",
           "ratio_plan", "renice", "run_experiment", "run_plan", "smoothed_jain", "summarize", "summary_lines",
           "summary_table", "tenant_plan", "testbed", "wait_for_quiet", "write_outputs"]
