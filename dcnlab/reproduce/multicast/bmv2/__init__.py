"""BMv2 experiment: C-MR4LMS multicast on a small midplane fat-tree: C-MR4LMS (Chen et al.), Algorithms 1-3,
the fault-tolerant trees (Fig. 5) and the job allocation rules 1)-7).

Modules, in dependency order:

* :mod:`~dcnlab.reproduce.multicast.bmv2.setup` — the instance, :class:`EmuConfig`, the cuts, the run's state;
* :mod:`~dcnlab.reproduce.multicast.bmv2.workload` — jobs placed by rules 1–7 and the groups they create;
* :mod:`~dcnlab.reproduce.multicast.bmv2.checks` — a window against the model, the switches' state read back;
* :mod:`~dcnlab.reproduce.multicast.bmv2.traffic` — group membership on the hosts, one window of messages;
* :mod:`~dcnlab.reproduce.multicast.bmv2.failure` — the link cut, its detection and the failover;
* :mod:`~dcnlab.reproduce.multicast.bmv2.report` — :class:`EmuResult`, its summary, JSON and plot;
* :mod:`~dcnlab.reproduce.multicast.bmv2.timeline` — :func:`run_experiment`: the timeline from bring-up to teardown.
"""

from dcnlab.reproduce.multicast.bmv2.checks import WindowResult
from dcnlab.reproduce.multicast.bmv2.failure import Failover, LinkWatcher, choose_cut
from dcnlab.reproduce.multicast.bmv2.report import (
                                                    EmuResult,
                                                    emulation_note,
                                                    plot,
                                                    write_outputs,
)
from dcnlab.reproduce.multicast.bmv2.setup import (
                                                    CUTS,
                                                    DEFAULT_COLORS,
                                                    DEFAULT_SPEC,
                                                    QUICK,
                                                    EmuConfig,
                                                    EmulationError,
                                                    JobSpec,
                                                    quick,
)
from dcnlab.reproduce.multicast.bmv2.timeline import run_experiment
from dcnlab.reproduce.multicast.bmv2.workload import (
                                                    Group,
                                                    job_groups,
                                                    merges_in_model,
                                                    place_jobs,
)

__all__ = ["CUTS", "DEFAULT_COLORS", "DEFAULT_SPEC", "QUICK", "EmuConfig", "EmuResult", "EmulationError", "Failover",
           "Group", "JobSpec", "LinkWatcher", "WindowResult", "choose_cut", "emulation_note", "job_groups",
           "merges_in_model", "place_jobs", "plot", "quick", "run_experiment", "write_outputs"]
