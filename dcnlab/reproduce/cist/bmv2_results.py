"""The BMv2 experiment of broadcast over CISTs (:mod:`dcnlab.reproduce.cist.bmv2`, which runs it): its
configuration, the failure sets each phase injects, the outcome of each scheme and phase with the printed tables
and checks, and the outputs (the plot and the JSON)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from dcnlab.topos.errors import UserError

MISMATCHES_LISTED = 20


class EmulationError(UserError):
    """The emulation could not do what the experiment needs (a switch crashed on its own, a command failed)."""


@dataclass(frozen=True)
class EmuConfig:
    """One emulated instance and its traffic."""

    spec: str
    rate_pps: float = 0.5
    """Broadcasts per second per source (each is k + 1 frames)."""
    during: int = 4
    """Broadcasts per source in the window the failures hit."""
    inject_at: float = 3.0
    """Seconds into that window when the failures are injected."""
    after: int = 2
    """Broadcasts per source once the failures are in place."""
    size: int = 128
    """Frame size in bytes."""
    kinds: tuple[str, ...] = ("switch", "link")
    max_failures: int | None = None
    """Largest failure set (default k)."""
    restored_check: bool = True
    """End with a phase without failures, after every repair."""
    settle: float = 0.3
    """Seconds to wait before checking whether copies are still arriving."""
    settle_max: float = 30.0
    """Longest wait for the receivers to go quiet (copies queued in a busy fabric arrive late, not never)."""
    queue_depth: int | None = None
    """BMv2 egress queue depth on every port (packets); None keeps BMv2's default of 64."""
    sources: int | None = None
    """Sending hosts (evenly spread; None = every host). Every host receives."""
    seed: int = 0

    def validate(self) -> None:
        if self.queue_depth is not None and not 1 <= self.queue_depth <= 1_000_000:
            raise UserError(f"queue_depth={self.queue_depth} is out of range; valid: 1..1000000 packets")
        if not 0 < self.rate_pps <= 1000:
            raise UserError(f"rate_pps={self.rate_pps} is out of range; valid: 0 < rate_pps <= 1000")
        if self.during < 1 or self.after < 1:
            raise UserError(f"during={self.during}, after={self.after}: valid: at least 1 broadcast each")
        if not 0 <= self.inject_at < self.during / self.rate_pps:
            raise UserError(f"inject_at={self.inject_at} s must fall inside the window of "
                            f"{self.during / self.rate_pps:.2f} s (during / rate_pps)")
        bad = [k for k in self.kinds if k not in ("switch", "link")]
        if bad or not self.kinds:
            raise UserError(f"failure kinds {list(self.kinds)}: valid: switch, link")


SMALL = EmuConfig("dragonfly:p=1,a=4,h=2", rate_pps=0.5, during=4, inject_at=3.0, after=2)
"""The small instance: Dragonfly(p=1,a=4,h=2), the paper's worked D(4,2), 36 switches, k = 2."""


LARGE = EmuConfig("dragonfly:p=1,a=6,h=2", rate_pps=0.1, during=2, inject_at=8.0, after=1)
"""The larger instance that fits this machine: Dragonfly(p=1,a=6,h=2), 78 switches, k = 3 (Dragonfly(1,6,3) has
114 switches; at about 85 MiB and a share of 2 busy cores per BMv2 process, 78 is what runs reliably here)."""


def quick(cfg: EmuConfig) -> EmuConfig:
    """A shorter run of the same instance: fewer broadcasts, no final restored phase."""
    during = max(3, cfg.during * 3 // 4)
    return replace(cfg, during=during, inject_at=min(cfg.inject_at, 0.4 * during / cfg.rate_pps),
                   after=max(1, cfg.after // 2), restored_check=False)


@dataclass(frozen=True)
class FailureCase:
    name: str
    kind: str
    """none, switch or link."""
    failures: Any
    """:class:`dcnlab.controller.cist.failures.Failures`."""
    cut_pair: tuple[str, str] | None = None
    """The pair whose tree paths the adversary cuts."""

    @property
    def f(self) -> int:
        return len(self.failures)


def failure_cases(graph: Any, trees: Sequence[Any], kinds: Sequence[str], max_failures: int, seed: int = 0,
                  restored_check: bool = True) -> list[FailureCase]:
    """none; per kind, f = 1..max_failures elements of the adversary's k; optionally none again at the end."""
    from dcnlab.controller.cist.failures import Failures, adversarial_failures

    cases = [FailureCase("none", "none", Failures())]
    for kind in kinds:
        attack = adversarial_failures(graph, trees, kind, seed=seed)  # type: ignore[arg-type]
        items: list[str | tuple[str, str]] = sorted(attack.failures.switches) + sorted(attack.failures.links)
        for f in range(1, min(max_failures, len(items)) + 1):
            chosen = items[:f]
            fails = Failures.of([x for x in chosen if isinstance(x, str)], [x for x in chosen if isinstance(x, tuple)])
            cases.append(FailureCase(f"{kind} f={f}", kind, fails, attack.pair))
    if restored_check:
        cases.append(FailureCase("restored", "none", Failures()))
    return cases


@dataclass(frozen=True)
class SchemeOutcome:
    """One scheme (the k CISTs, or the single tree) in one phase, over the counted host pairs."""

    pairs: int
    during_expected: int
    """Broadcast deliveries due in the failure window (broadcasts x counted receivers)."""
    during_lost: int
    """Of those, never delivered."""
    during_pairs_hit: int
    """Pairs that missed at least one broadcast of the failure window."""
    after_delivered: int
    """Pairs that got every broadcast of the *after* window."""
    after_partial: int
    """Pairs that got some but not all of them (not a model outcome: congestion)."""
    model_delivered: int
    """Pairs the failure model says are delivered."""
    mismatches: tuple[tuple[str, str, str], ...]
    """(source, destination, what) where emulation and model disagree, at most 20."""
    mismatch_count: int
    dups: int
    """Copies beyond the first of each broadcast (the CISTs without failures: k-1 per broadcast)."""
    extra: int
    """Copies beyond one per tree per broadcast (loops or double replication: must be 0)."""
    exact: bool
    """Every counted pair got every broadcast of both windows, one copy per tree."""
    during_unexplained: int = 0
    """Lost deliveries of the failure window on pairs the model keeps delivered under the failures (one of
    their tree paths was intact the whole time): congestion or an injection artefact, never the trees."""
    lost_examples: tuple[tuple[str, str, str], ...] = ()
    """(source, destination, details) of up to 20 pairs that missed broadcasts in the failure window."""

    @property
    def agree(self) -> bool:
        return self.mismatch_count == 0


@dataclass(frozen=True)
class PhaseResult:
    name: str
    kind: str
    failures: tuple[str, ...]
    cut_pair: tuple[str, str] | None
    injected_at: float | None
    """Seconds into the failure window when the last failure was in place."""
    counted_hosts: int
    cist: SchemeOutcome
    single: SchemeOutcome
    seconds: float

    @property
    def f(self) -> int:
        return len(self.failures)


@dataclass(frozen=True)
class EmuResult:
    spec: str
    switches: int
    hosts: int
    sources: int
    k: int
    diameters: tuple[int, ...]
    baseline_root: str
    baseline_diameter: int
    config: EmuConfig
    phases: tuple[PhaseResult, ...]
    bringup_seconds: float
    install_seconds: float
    seconds: float
    frames_sent: int
    senders: tuple[str, ...] = field(default=())
    """The hosts that broadcast (every host receives)."""
    notes: tuple[str, ...] = field(default=())

    def checks(self) -> dict[str, bool]:
        clean = [p for p in self.phases if p.f == 0]
        within = [p for p in self.phases if 1 <= p.f <= self.k - 1]
        return {
            "exactly_once": all(p.cist.exact and p.single.exact for p in clean),
            "survives_k_minus_1": all(p.cist.during_lost == 0 and p.cist.after_delivered == p.cist.pairs
                                      for p in within),
            "agrees_with_model": all(p.cist.agree and p.single.agree for p in self.phases),
        }

    @property
    def ok(self) -> bool:
        return all(self.checks().values())

    def summary_lines(self) -> list[str]:
        c = self.config
        import textwrap

        from dcnlab.results.tables import MAX_WIDTH, Column, table

        def prose(text: str) -> list[str]:
            return textwrap.wrap(text, MAX_WIDTH, subsequent_indent=" " * 12)

        lines = prose(f"emulation   {self.spec}: {self.switches} BMv2 switches, {self.hosts} hosts, {self.sources} "
                      f"sources; k={self.k} CISTs (diameters {', '.join(map(str, self.diameters))}) + 1 BFS tree "
                      f"from {self.baseline_root} (diameter {self.baseline_diameter})")
        lines += prose(f"traffic     {c.rate_pps:g} broadcasts/s per source, {c.during} per source in the failure "
                       f"window (failures at {c.inject_at:g} s), {c.after} after; {self.frames_sent:,} frames sent; "
                       f"up in {self.bringup_seconds:.1f} s, trees installed in {self.install_seconds:.2f} s, total "
                       f"{self.seconds:.0f} s")
        rows = []
        for p in self.phases:
            cs, sg = p.cist, p.single
            agree = "yes" if cs.agree and sg.agree else f"NO ({cs.mismatch_count}+{sg.mismatch_count})"
            rows.append((p.name, ", ".join(p.failures) or "-", cs.pairs, f"{cs.during_lost}/{sg.during_lost}",
                         f"{cs.during_pairs_hit}/{sg.during_pairs_hit}", f"{cs.after_delivered}/{sg.after_delivered}",
                         f"{cs.model_delivered}/{sg.model_delivered}", agree))
        lines += table([Column("phase"), Column("failed", wrap=True, min_width=14), Column("pairs", "count", ">"),
                        Column("lost during", "CISTs/tree", ">"), Column("pairs hit", "CISTs/tree", ">"),
                        Column("after", "delivered", ">"), Column("model", "delivered", ">"),
                        Column("= model", "exact")], rows,
                       notes=["during: broadcasts lost in the failure window (and the pairs they hit); after: "
                              "pairs delivered after it, by the k CISTs / by the single BFS tree; model: the "
                              "pairs the trees reach under the failures."]).splitlines()
        checks = self.checks()
        worst = [p for p in self.phases if p.f >= self.k]
        lines += [f"checks      exactly once after dedup (no failures): {'yes' if checks['exactly_once'] else 'NO'}",
                  f"            nothing lost with <= {self.k - 1} failure(s): "
                  f"{'yes' if checks['survives_k_minus_1'] else 'NO'}",
                  f"            delivered pairs = model: {'yes' if checks['agrees_with_model'] else 'NO'}"]
        for p in worst:
            lines += prose(f"with k={p.f} {p.kind} failures ({', '.join(p.failures)}; the adversary cuts "
                           f"{p.cut_pair[0] if p.cut_pair else '?'}-{p.cut_pair[1] if p.cut_pair else '?'}): CISTs "
                           f"lose {p.cist.pairs - p.cist.after_delivered} of {p.cist.pairs} pairs, the single tree "
                           f"loses {p.single.pairs - p.single.after_delivered}")
        for p in self.phases:
            if p.cist.during_unexplained:
                lines += prose(f"{p.name}: {p.cist.during_unexplained} CIST deliveries lost in the failure window "
                               f"on pairs with an intact tree path, e.g. {' '.join(p.cist.lost_examples[0])}")
        for n in self.notes:
            lines += prose(f"note        {n}")
        return lines

    def to_json(self) -> dict[str, Any]:
        def outcome(o: SchemeOutcome) -> dict[str, Any]:
            d = {k: getattr(o, k) for k in ("pairs", "during_expected", "during_lost", "during_pairs_hit",
                                             "after_delivered", "after_partial", "model_delivered",
                                             "mismatch_count", "dups", "extra", "exact", "agree",
                                             "during_unexplained")}
            d["mismatches"] = [list(m) for m in o.mismatches]
            d["lost_examples"] = [list(m) for m in o.lost_examples]
            return d

        return {"spec": self.spec, "switches": self.switches, "hosts": self.hosts, "sources": self.sources,
                "k": self.k, "diameters": list(self.diameters), "baseline_root": self.baseline_root,
                "baseline_diameter": self.baseline_diameter,
                "config": {k: (list(v) if isinstance(v, tuple) else v) for k, v in vars(self.config).items()},
                "checks": self.checks(), "ok": self.ok, "bringup_seconds": self.bringup_seconds,
                "install_seconds": self.install_seconds, "seconds": self.seconds, "frames_sent": self.frames_sent,
                "senders": list(self.senders), "notes": list(self.notes),
                "phases": [{"name": p.name, "kind": p.kind, "f": p.f, "failures": list(p.failures),
                            "cut_pair": list(p.cut_pair) if p.cut_pair else None, "injected_at": p.injected_at,
                            "counted_hosts": p.counted_hosts, "seconds": p.seconds,
                            "cists": outcome(p.cist), "single_tree": outcome(p.single)} for p in self.phases]}


def slug(spec: str) -> str:
    return spec.replace("dragonfly:", "dragonfly-").replace(",", "-").replace("=", "")


def plot(result: EmuResult, path: Path) -> None:
    """Delivered fraction of host pairs (after window) vs failed elements, CISTs vs single tree, emulation
    (open markers) and model (dashed lines), one panel per failure kind (sharing the y-range)."""
    from matplotlib.lines import Line2D

    from dcnlab.figures import plotcheck, plotstyle

    plt = plotstyle.pyplot()
    kinds = [k for k in ("switch", "link") if any(p.kind == k for p in result.phases)]
    base = next((p for p in result.phases if p.f == 0), None)
    fig, axes = plt.subplots(1, max(1, len(kinds)), figsize=(6 * max(1, len(kinds)) + 2.5, 4.6), squeeze=False,
                             sharey=True, layout="constrained")
    if not kinds:
        axes[0][0].set_title("no failure phases")
        plotstyle.note(axes[0][0], "the run had no phase with failures")
    for ax, kind in zip(axes.flat, kinds):
        phases = ([base] if base else []) + [p for p in result.phases if p.kind == kind]
        xs = [p.f for p in phases]
        for label, get, colour, marker in ((f"{result.k} CISTs", lambda p: p.cist, "tab:blue", "o"),
                                           ("single BFS tree", lambda p: p.single, "tab:red", "s")):
            emu = [get(p).after_delivered / get(p).pairs for p in phases]
            model = [get(p).model_delivered / get(p).pairs for p in phases]
            ax.plot(xs, model, "--", color=colour, alpha=0.7)
            ax.plot(xs, emu, linestyle="none", marker=marker, color=colour, ms=8, mfc="none", mew=1.5,
                    label=f"{label}, BMv2")
        ax.axvline(result.k - 0.5, color="grey", lw=0.8, ls=":")
        ax.set_xticks(range(0, max(xs) + 1))
        ax.set_xlabel(f"failed {'switches' if kind == 'switch' else 'links'}, chosen by the adversary (count)")
        ax.set_ylabel("delivered host pairs (fraction)")
        ax.set_ylim(0.0, 1.03)
        ax.set_title(f"{kind} failures")
        ax.grid(alpha=0.3)
    if kinds:
        handles, labels = axes.flat[0].get_legend_handles_labels()
        handles += [Line2D([], [], color="#555555", ls="--"), Line2D([], [], color="grey", lw=0.8, ls=":")]
        labels += ["model (dashed, in the scheme's colour)",
                   f"k - 1/2: Theorem 4 loses nothing left of it (k={result.k})"]
        plotstyle.legend_outside(axes.flat[len(kinds) - 1], handles=handles, labels=labels)
    fig.suptitle(plotstyle.title("004", None, f"broadcast on {result.spec}, {result.switches} BMv2 switches, "
                                              f"k = {result.k}"))
    plotcheck.save(fig, path, dpi=120)


def write_outputs(result: EmuResult, out: Path) -> tuple[Path, Path]:
    out.mkdir(parents=True, exist_ok=True)
    name = f"emulation-{slug(result.spec)}"
    png, js = out / f"{name}.png", out / f"{name}.json"
    plot(result, png)
    js.write_text(json.dumps(result.to_json(), indent=1))
    return png, js
