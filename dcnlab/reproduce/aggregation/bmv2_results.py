"""The BMv2 experiment of in-network aggregation (:mod:`dcnlab.reproduce.aggregation.bmv2`, which runs it): its
configuration and scenarios, the results of each job, fabric and run with their printed tables and checks, and
the outputs (the plot, ``emulation.json``, the note for ``summary.json``)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from dcnlab.topos.errors import UserError

PAPER_SENDERS = ("v2", "v5", "v9", "v10", "v11", "v14")


PAPER_RECEIVER = "v0"


PAPER_GROUP = ("v0", "v3", "v8")


DEFAULT_OUT = "results/aggregation-emu"


SPECS = ("bcube:n=4,k=1", "bcube:n=3,k=2", "fattree:k=4")


LABELS = {"incast": "incast (IRS)"}
"""Algorithms in words where the name is not enough; a reference shows its object's name."""


def label(algo: str) -> str:
    return LABELS.get(algo, algo.rsplit(":", 1)[-1] if ":" in algo else algo)


class EmulationError(UserError):
    """The emulation could not run a job (an agent command failed, a job did not finish in time)."""


@dataclass(frozen=True)
class EmuConfig:
    specs: tuple[str, ...] = SPECS
    keys: int = 1024
    """Keys per receiver (64 chunks of 16 counts)."""
    words: int = 200_000
    """Words in each sender's corpus."""
    rate_pps: float = 0.0
    """Chunks per second per sender and tree (0: as fast as the window allows)."""
    slots: int = 32
    """Slots per tree at every aggregating node, and the senders' window (chunks)."""
    rto: float = 2.0
    queue_depth: int = 1024
    bw_mbps: float | None = 0.25
    """tc rate on every link (None: unshaped, and BMv2's CPU is the bottleneck)."""
    timeout: float = 60.0
    tolerance: float = 0.05
    seed: int = 1
    incast_senders: int = 8
    shuffle_senders: int = 6
    shuffle_receivers: int = 3
    extra_algorithms: tuple[str, ...] = ()
    """A user's tree builders (:mod:`dcnlab.controller.aggregation.registry`: plug-ins or references) run beside the
    papers' in every job that their fabric kind allows (a shuffle: the union of their trees)."""

    def validate(self) -> None:
        if not 16 <= self.keys <= 65536:
            raise UserError(f"keys={self.keys} is out of range; valid: 16..65536")
        if not 0 <= self.rate_pps <= 5000:
            raise UserError(f"rate_pps={self.rate_pps} is out of range; valid: 0 (window only) .. 5000")
        if self.slots < 1 or self.slots & (self.slots - 1) or self.slots > 1024:
            raise UserError(f"slots={self.slots}: valid: a power of two, 1..1024")
        if not 0 < self.tolerance < 1:
            raise UserError(f"tolerance={self.tolerance}: valid: 0 < tolerance < 1")


QUICK = EmuConfig(specs=("bcube:n=4,k=1",), keys=512)


@dataclass(frozen=True)
class Scenario:
    kind: str
    receivers: tuple[str, ...]
    senders: tuple[str, ...]
    algorithms: tuple[str, ...]


def scenarios(fabric: Any, cfg: EmuConfig) -> list[Scenario]:
    """The incast and the shuffle to run on ``fabric`` (the papers' example on BCube(4,1))."""
    import numpy as np

    from dcnlab.topos.bcube import BCube

    inc: tuple[str, ...]
    shu: tuple[str, ...]
    from dcnlab.controller.aggregation import registry

    mine = tuple(a for a in cfg.extra_algorithms if fabric.kind in registry.fabrics_of(registry.get(a)))
    if isinstance(fabric, BCube):
        inc, shu = ("irs", "m2", "unicast", *mine, "none"), ("srs", "incast", "m2", "unicast", *mine, "none")
        if (fabric.n, fabric.k) == (4, 1):
            return [Scenario("incast", (PAPER_RECEIVER,), PAPER_SENDERS, inc),
                    Scenario("shuffle", PAPER_GROUP, PAPER_SENDERS, shu)]
        members = [f"v{i}" for i in range(fabric.num_hosts())]
    else:
        inc, shu = ("updown", "unicast", "kmb", *mine, "none"), ("updown", "unicast", *mine, "none")
        members = [h.name for h in fabric.hosts()]
    rng = np.random.default_rng(cfg.seed)
    need = max(1 + cfg.incast_senders, cfg.shuffle_receivers + cfg.shuffle_senders)
    if need > len(members):
        raise UserError(f"{fabric.spec} has {len(members)} members; the scenarios need {need}")
    pick = [members[i] for i in rng.choice(len(members), size=need, replace=False)]
    r = cfg.shuffle_receivers
    return [Scenario("incast", (pick[0],), tuple(pick[1:1 + cfg.incast_senders]), inc),
            Scenario("shuffle", tuple(pick[:r]), tuple(pick[r:r + cfg.shuffle_senders]), shu)]


@dataclass(frozen=True)
class JobResult:
    spec: str
    kind: str
    algorithm: str
    receivers: tuple[str, ...]
    senders: tuple[str, ...]
    chunks: int
    exact: bool
    model_cost: float
    """The model's cost (units: one sender's partition to one receiver)."""
    model_bytes: int
    measured_bytes: int
    """The trees' own aggregation bytes (retx 0) counted by the switches on the links the model counts."""
    recovery_bytes: int
    """Retransmitted chunks and aggregates (retx 1) on the same links."""
    fabric_losses: int
    """Aggregation frames one switch sent and the next did not count (lost in between)."""
    host_bytes_predicted: int
    host_bytes_measured: int
    """The same on the hosts' own links (not in the model)."""
    stray_bytes: int
    """Aggregation bytes on links of no tree (should be 0)."""
    control_bytes: int
    """Every other byte on the model's links (port counters minus aggregation bytes): acknowledgements."""
    link_mismatches: int
    completion_s: float | None
    """None: some receiver did not complete within the timeout."""
    busiest_link: str
    busiest_bytes: int
    """Aggregation bytes (recovery included) on the most loaded directed link, host links included."""
    sent: int
    retransmitted: int
    requests: int
    duplicate_results: int
    entries: int
    aggregators: int
    busiest_units: int = 0
    """Streams on the most loaded directed link of the job's trees, host links included (the model's count)."""
    model_completion_s: float = 0.0
    """The link-bound model of this job's completion: ``busiest_units`` x one stream's chunks at the link rate
    (:func:`dcnlab.controller.aggregation.waiting.link_seconds`; 0 on unshaped links)."""
    start_skew_s: float = 0.0
    """How long after the common start the last sender sent its first chunk (every tree waits for it)."""

    @property
    def error(self) -> float:
        return self.measured_bytes / self.model_bytes - 1 if self.model_bytes else 0.0

    @property
    def total_error(self) -> float:
        total = self.measured_bytes + self.recovery_bytes
        return total / self.model_bytes - 1 if self.model_bytes else 0.0

    def agrees(self, tolerance: float) -> bool:
        return abs(self.error) <= tolerance


@dataclass(frozen=True)
class FabricResult:
    spec: str
    nodes: int
    hosts: int
    bringup_s: float
    jobs: tuple[JobResult, ...]

    def none_bytes(self, kind: str) -> tuple[int, int]:
        j = next(j for j in self.jobs if j.kind == kind and j.algorithm == "none")
        return j.measured_bytes, j.model_bytes

    def savings(self, job: JobResult) -> tuple[float, float]:
        measured, model = self.none_bytes(job.kind)
        return 1 - job.measured_bytes / measured, 1 - job.model_bytes / model


@dataclass(frozen=True)
class EmuResult:
    config: EmuConfig
    fabrics: tuple[FabricResult, ...]
    seconds: float

    def checks(self) -> dict[str, bool]:
        jobs = [j for f in self.fabrics for j in f.jobs]
        return {"exact": all(j.exact for j in jobs),
                "bytes_agree": all(j.agrees(self.config.tolerance) for j in jobs),
                "no_stray_bytes": all(j.stray_bytes == 0 for j in jobs)}

    @property
    def ok(self) -> bool:
        return all(self.checks().values())

    def summary_lines(self) -> list[str]:
        """Per fabric a table (at most 100 columns) of the jobs: exact results, bytes against the model within
        the tolerance, savings, completion, retransmissions; then the checks."""
        import textwrap

        from dcnlab.results.tables import MAX_WIDTH, Column, table

        tol = self.config.tolerance
        lines = []
        for f in self.fabrics:
            lines.append(f"{f.spec}: {f.nodes} BMv2 nodes, {f.hosts} hosts, up in {f.bringup_s:.1f} s")
            rows = []
            for j in f.jobs:
                meas, model = f.savings(j)
                rows.append((j.kind, label(j.algorithm), "yes" if j.exact else "NO", j.model_bytes,
                             j.measured_bytes, f"{100 * j.error:+.1f}", "yes" if j.agrees(tol) else "NO",
                             f"{100 * j.total_error:+.1f}", f"{100 * meas:.1f} ({100 * model:.1f})",
                             f"{_secs(j.completion_s)} ({j.model_completion_s:.2f})",
                             f"{j.retransmitted}/{j.fabric_losses}"))
            lines += ["  " + line for line in table(
                [Column("job"), Column("algorithm"), Column("exact", "check"), Column("model", "B", ">"),
                 Column("BMv2", "B", ">"), Column("diff", "%", ">"), Column("agree", f"±{100 * tol:g}%"),
                 Column("+retx", "%", ">"), Column("saving", "%, model", ">"), Column("time", "s, model", ">"),
                 Column("retx/lost", "frames", ">")], rows, label_columns=2, max_width=MAX_WIDTH - 2).splitlines()]
            off = [f"{j.kind} {label(j.algorithm)}" for j in f.jobs if not j.agrees(tol)]
            if off:
                lines += textwrap.wrap(f"  <-- off by more than {100 * tol:g}%: {', '.join(off)}", MAX_WIDTH,
                                       subsequent_indent="  ")
            lines += textwrap.wrap("  busiest links: " + "; ".join(
                f"{j.kind} {label(j.algorithm)} {j.busiest_link} {j.busiest_bytes / 1e3:.1f} kB "
                f"({j.busiest_units} streams in the model)"
                for j in f.jobs) + "; acknowledgement bytes on the model's links: " + ", ".join(
                str(j.control_bytes) for j in f.jobs), MAX_WIDTH, subsequent_indent="    ")
        checks = self.checks()
        lines.append("checks: " + ", ".join(f"{k} {'ok' if v else 'FAILED'}" for k, v in checks.items())
                     + f"; {self.seconds:.0f} s in all")
        return lines

    def to_json(self) -> dict[str, Any]:
        return {"config": asdict(self.config), "seconds": self.seconds, "checks": self.checks(),
                "fabrics": [{"spec": f.spec, "nodes": f.nodes, "hosts": f.hosts, "bringup_s": f.bringup_s,
                             "jobs": [asdict(j) | {"error": j.error, "total_error": j.total_error,
                                                   "saving_measured": f.savings(j)[0],
                                                   "saving_model": f.savings(j)[1]} for j in f.jobs]}
                            for f in self.fabrics]}


def _secs(s: float | None) -> str:
    return "n/a" if s is None else f"{s:.2f}"


def plot(result: EmuResult, path: Path) -> None:
    """Per fabric: model vs measured link bytes per job, and completion times (the fabrics' panels share
    their y-ranges; a job that did not complete says so)."""
    import math

    from dcnlab.figures import plotcheck, plotstyle

    plt = plotstyle.pyplot()
    rows = len(result.fabrics)
    fig, axes = plt.subplots(rows, 2, figsize=(14, 3.9 * rows + 0.8), squeeze=False, layout="constrained",
                             sharey="col")
    for (ax_b, ax_t), f in zip(axes, result.fabrics):
        names = [f"{j.kind}\n{label(j.algorithm)}" for j in f.jobs]
        xs = list(range(len(f.jobs)))
        ax_b.bar([x - 0.2 for x in xs], [j.model_bytes / 1e3 for j in f.jobs], 0.4, label="model", color="tab:grey")
        ax_b.bar([x + 0.2 for x in xs], [j.measured_bytes / 1e3 for j in f.jobs], 0.4, label="BMv2 counters",
                 color="tab:blue")
        ax_b.set_xticks(xs, names, fontsize=8)
        ax_b.set_ylabel("bytes on the trees' links (kB)")
        ax_b.set_xlabel("job (kind, algorithm)")
        ax_b.set_title(f"{f.spec}: bytes on the trees' links, model and BMv2")
        plotstyle.legend_outside(ax_b)
        times = [j.completion_s if j.completion_s is not None else math.nan for j in f.jobs]
        ax_t.bar(xs, times, color="tab:green", label="completion time")
        for x, t in zip(xs, times):
            if math.isnan(t):
                ax_t.annotate("did not\ncomplete", (x, 0), xytext=(0, 4), textcoords="offset points", ha="center",
                              va="bottom", fontsize=8, color="tab:red")
        ax_t.set_xticks(xs, names, fontsize=8)
        ax_t.set_ylabel("job completion time (s)")
        ax_t.set_xlabel("job (kind, algorithm)")
        ax_t.set_title(f"{f.spec}: job completion time on BMv2")
        for ax in (ax_b, ax_t):
            ax.grid(alpha=0.3, axis="y")
    fig.suptitle("Guo et al. (IRS/SRS) and Fang et al. (M2) trees on BMv2 (no figure in the papers): word-count "
                 "jobs, bytes against the model and completion times")
    plotcheck.save(fig, path, dpi=110)


def write_outputs(result: EmuResult, out: Path) -> tuple[Path, Path]:
    out.mkdir(parents=True, exist_ok=True)
    png, js = out / "aggregation-emu.png", out / "aggregation-emu.json"
    plot(result, png)
    js.write_text(json.dumps(result.to_json(), indent=1, default=str) + "\n")
    return png, js


def emulation_note(result: EmuResult) -> str:
    """What ran on BMv2, for ``summary.json`` and the report."""
    return (f"ran on BMv2: word-count incast and shuffle jobs on {', '.join(f.spec for f in result.fabrics)} "
            f"({result.seconds:.0f} s)")
