"""InfiniBand-style congestion control and tenant-fair bandwidth partition: IB CC partitioning (Zhang et al., paper
002; full reference in :mod:`dcnlab.results.papers`).

* :mod:`~dcnlab.controller.congestion.params`: IB CC parameters validated against the IB field ranges.
* :mod:`~dcnlab.controller.congestion.cct`: the paper's CCT and the time scale for BMv2.
* :mod:`~dcnlab.controller.congestion.policy`: tenant weights -> per-flow ``CCTI_Increase`` and meter rates.
* :mod:`~dcnlab.controller.congestion.fluid`: fluid model of the control loop (the model backend).
* :mod:`~dcnlab.controller.congestion.scenarios`: the paper's experiments (and large-scale ones) as schedules.

The host-side state machines (CCTI controller, pacer, BECN reflector) are in :mod:`dcnlab.traffic.cc`.
"""

from dcnlab.controller.congestion.cct import Cct, TimeScale
from dcnlab.controller.congestion.params import (
    CongestionParamError,
    HcaParams,
    PacerParams,
    ReceiverParams,
    SwitchParams,
)
from dcnlab.controller.congestion.policy import FlowSpec, FlowUpdate, MeterRate, Tenant, TenantPolicy

__all__ = ["Cct", "TimeScale", "CongestionParamError", "HcaParams", "PacerParams", "ReceiverParams",
           "SwitchParams", "FlowSpec", "FlowUpdate", "MeterRate", "Tenant", "TenantPolicy"]
