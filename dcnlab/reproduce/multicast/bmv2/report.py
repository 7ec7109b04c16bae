"""The experiment's result and what is written of it: the summary lines, the JSON, the plot, the note.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from dcnlab.reproduce.multicast.bmv2.checks import WindowResult
from dcnlab.reproduce.multicast.bmv2.failure import Failover
from dcnlab.reproduce.multicast.bmv2.setup import COMPARE_COLORS


@dataclass(frozen=True)
class EmuResult:
    spec: str
    switches: int
    hosts: int
    colors: int
    variant: str
    feed: str
    groups: tuple[dict, ...]
    jobs: tuple[dict, ...]
    install: tuple[dict, ...]
    churn: tuple[dict, ...]
    readback: dict
    windows: tuple[WindowResult, ...]
    failover: Failover | None
    merges: int
    merges_more_colors: int
    entries_per_port_max: int
    trees: int
    bringup_seconds: float
    total_seconds: float
    link_points: tuple[tuple[int, int], ...] = field(default=(), repr=False)
    """(model, measured) packets per directed link over the model-checked windows, for the plot."""
    algorithms: tuple[dict, ...] = ()
    """With ``--algo``: C-MR4LMS's steady window and each other router's (:mod:`.algorithms`), one row each."""

    def checks(self) -> dict[str, bool]:
        w = self.windows
        out = {"exactly_once": all(x.exact for x in w if x.name != "failure"),
               "outsiders": all(x.outsider_delivered == 0 for x in w)
               and all(x.filtered == x.filtered_model for x in w if x.model_checked),
               "counters": all(x.copies_model_ok and x.counters_ok for x in w if x.model_checked),
               "readback": bool(self.readback.get("ok", False))}
        if self.failover is not None:
            fail = next(x for x in w if x.name == "failure")
            out["failover_detected"] = self.failover.detected
            if self.feed == "both":
                out["failover_no_loss"] = fail.exact and fail.outsider_delivered == 0
        if self.algorithms:
            out["algorithms"] = all(all(r["checks"].values()) for r in self.algorithms)
        return out

    def ok(self) -> bool:
        return all(self.checks().values())

    def summary_lines(self) -> list[str]:
        """The run in lines of at most 100 columns: setup, updates, readback, a table of the windows,
        failover and the checks."""
        import textwrap

        from dcnlab.results.tables import MAX_WIDTH, Column, table

        def prose(text: str) -> list[str]:
            return textwrap.wrap(text, MAX_WIDTH, subsequent_indent=" " * 10)

        lines = prose(f"C-MR4LMS on BMv2: {self.spec} ({self.switches} switches, {self.hosts} hosts), "
                      f"C={self.colors}, {self.variant}, dual trees fed '{self.feed}'")
        lines += prose(f"workload  {len(self.jobs)} jobs at the end, {len(self.groups)} groups on {self.trees} trees "
                       f"per plane; {self.merges} groups share a tree (model with C={COMPARE_COLORS}: "
                       f"{self.merges_more_colors}); entries per port max {self.entries_per_port_max} "
                       f"(C={self.colors})")
        for name, ops in (("install", self.install), ("churn", self.churn)):
            if ops:
                ups = sum(o["updates"] for o in ops)
                sws = sum(o["switches"] for o in ops)
                ms = 1e3 * sum(o["compute_seconds"] + o["write_seconds"] for o in ops)
                kinds = Counter(o["op"] for o in ops)
                lines += prose(f"{name:<9} {', '.join(f'{n} {k}' for k, n in kinds.items())}: {ups} updates over "
                               f"{sws} switch writes, {ms:.0f} ms")
        rb = self.readback
        lines += prose(f"readback  {rb.get('entries', 0)} tree_replicate entries and {rb.get('groups', 0)} PRE "
                       f"groups on {rb.get('switches', 0)} switches equal the from-scratch compilation: {rb.get('ok')}"
                       + (f" ({'; '.join(rb.get('problems', [])[:3])})" if rb.get("problems") else ""))
        rows = []
        for x in self.windows:
            checked = x.model_checked
            rows.append((x.name, f"{x.messages}/{x.streams}", f"{x.delivered}/{x.receptions}", f"{x.lost}/{x.dups}",
                         x.outsider_delivered, f"{x.filtered} ({x.filtered_model})" if checked else f"{x.filtered}",
                         f"{x.link_packets} ({x.link_model})" if checked else "-",
                         x.links_compared if checked else "-", len(x.link_mismatches) if checked else "-"))
        lines += table([Column("window"), Column("msgs/streams", "count", ">"), Column("delivered", "of due", ">"),
                        Column("lost/dups", "count", ">"), Column("outsiders", "count", ">"),
                        Column("filtered", "model", ">"), Column("link pkts", "model", ">"),
                        Column("links", "count", ">"), Column("differ", "links", ">")], rows,
                       notes=["delivered: receptions delivered exactly once, of those due; outsiders: messages a "
                              "host outside the group delivered (must be 0); filtered: copies hosts dropped; link "
                              "pkts: packets the switches counted on the model's links ('-': a window that changes "
                              "state is not compared)."]).splitlines()
        f = self.failover
        if f is not None:
            if f.detected:
                how = "carrier loss seen by ip monitor" if f.cut == "down" else "port-down notification"
                lines.append(f"failover  cut ({f.cut}) {f.link[0]}-{f.link[1]} at {f.cut_at:.2f} s; {how} after "
                             f"{1e3 * f.detection_seconds:.1f} ms")
                lines.append(f"          controller failover {1e3 * f.failover_seconds:.1f} ms (compute "
                             f"{1e3 * f.compute_seconds:.1f} [CPU {1e3 * (f.compute_cpu_seconds or 0):.1f}], writes "
                             f"{1e3 * f.write_seconds:.1f}); cut-to-switched {1e3 * f.total_seconds:.1f} ms")
                lines += prose(f"          moved groups {list(f.groups)} ({f.updates} updates on {f.switches} "
                               f"switches); {f.rescued} receptions saved by the second tree, "
                               f"{f.lost_while_switching} lost")
            else:
                lines += prose(f"failover  cut {f.link[0]}-{f.link[1]}: NOT detected within the timeout")
        if self.algorithms:
            lines += prose("routers   " + "; ".join(f"{r['algorithm']} ({r['origin']})" for r in self.algorithms))
            lines += algorithm_lines(self.algorithms)
        checks = self.checks()
        lines += prose("checks    " + "  ".join(f"{k}={'PASS' if v else 'FAIL'}" for k, v in checks.items()))
        lines.append(f"time      bring-up {self.bringup_seconds:.1f} s, total {self.total_seconds:.1f} s")
        return lines

    def to_json(self) -> dict[str, Any]:
        d = {k: v for k, v in asdict(self).items() if k not in ("windows", "failover", "link_points")
             and (k != "algorithms" or v)}
        d["windows"] = [asdict(w) | {"exact": w.exact, "counters_ok": w.counters_ok} for w in self.windows]
        d["failover"] = asdict(self.failover) if self.failover else None
        d["link_points"] = [list(p) for p in self.link_points]
        d["checks"] = self.checks()
        d["ok"] = self.ok()
        return d


def algorithm_lines(rows: tuple[dict, ...]) -> list[str]:
    """The routers side by side (``--algo``): groups placed, delivery, counters, table entries against C."""
    from dcnlab.results.tables import Column, table

    out = []
    for r in rows:
        w, c = r["window"], r["checks"]
        kind = next((k for k in ("built-in", "entry point") if r["origin"].startswith(k)), "reference")
        out.append((r["algorithm"].rsplit("/", 1)[-1], kind, f"{r['placed']}/{r['groups']}", r["trees"],
                    f"{w['delivered']}/{w['receptions']}", f"{w['lost']}/{w['dups']}",
                    f"{w['link_packets']} ({w['link_model']})", r["entries_per_switch_max"],
                    f"{r['entries_per_port_max']} (C={r['table_limit_per_port']})",
                    " ".join(k for k, v in c.items() if not v) or "ok"))
    return table([Column("router", wrap=True, min_width=14), Column("origin", wrap=True, min_width=11),
                  Column("groups", "placed", ">"), Column("trees", "count", ">"), Column("delivered", "of due", ">"),
                  Column("lost/dups", "count", ">"), Column("link pkts", "model", ">"),
                  Column("entries", "switch max", ">"), Column("per port", "max", ">"), Column("checks")], out,
                 notes=["each router's own steady window, before C-MR4LMS's run (C-MR4LMS's row: its steady "
                        "window); entries: tree_replicate entries written; checks: exactly once, counters = "
                        "model, table within C, readback. Failover, churn and dual trees: C-MR4LMS only."]
                 ).splitlines()


def slug(spec: str) -> str:
    return spec.replace("midplane:", "midplane-").replace(",", "-").replace("=", "")


def plot(result: EmuResult, path: Path) -> None:
    """(a) packets per directed link, BMv2 counters vs the model; (b) copies per reception around the cut."""
    from dcnlab.figures import plotcheck, plotstyle

    plt = plotstyle.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(15, 5.2), layout="constrained")
    ax = axes[0]
    pts = result.link_points
    ok = all(w.counters_ok for w in result.windows if w.model_checked)
    ax.set_title(f"(a) copies per directed link: {'all equal' if ok else 'MISMATCH'}")
    if pts:
        xs, ys = zip(*pts)
        top = max(max(xs), max(ys), 1)
        ax.plot([0, top], [0, top], color="grey", lw=0.8, ls="--", label="measured = model")
        ax.scatter(xs, ys, s=14, alpha=0.6, color="tab:blue", label=f"{len(pts)} directed links × windows")
        plotstyle.legend_outside(ax)
    else:
        plotstyle.note(ax, "no window was checked against the model")
    ax.set_xlabel("packets predicted from the trees (count)")
    ax.set_ylabel("packets counted by the switches (count)")
    ax.grid(alpha=0.3)
    ax = axes[1]
    f = result.failover
    if f is not None and f.timeline:
        ts = [t for t, _, _ in f.timeline]
        ax.plot(ts, [m for _, m, _ in f.timeline], "o-", color="tab:red", ms=4,
                label=f"groups moved to the second tree {list(f.groups)}")
        ax.plot(ts, [o for _, _, o in f.timeline], "s--", color="tab:green", ms=4, mfc="none", label="other groups")
        ax.axvline(0, color="black", lw=1, label=f"cut {f.link[0]}-{f.link[1]}")
        if f.detected and f.total_seconds is not None:
            ax.axvline(f.total_seconds, color="tab:orange", lw=1, ls="--",
                       label=f"failover done (+{1e3 * f.total_seconds:.1f} ms)")
        ax.set_ylim(0, 1.25)
        fail = next(w for w in result.windows if w.name == "failure")
        ax.set_title(f"(b) failure window: lost {fail.lost} of {fail.receptions} receptions")
        plotstyle.legend_outside(ax)
    else:
        ax.set_title("(b) failure window")
        plotstyle.note(ax, "no link was cut in this run")
    ax.set_xlabel("time after the cut (s, message send time)")
    ax.set_ylabel("copies received / copies before the cut (ratio)")
    ax.grid(alpha=0.3)
    fig.suptitle(plotstyle.title("001", None, f"C-MR4LMS on BMv2, {result.spec}, C={result.colors}, dual trees "
                                              f"(feed {result.feed})"))
    plotcheck.save(fig, path, dpi=120)


def emulation_note(result: EmuResult) -> str:
    """What ran on BMv2, for ``summary.json`` and the report."""
    checks = result.checks()
    return (f"ran on BMv2: C-MR4LMS on {result.spec} ({result.switches} switches), C={result.colors}; checks "
            + ", ".join(f"{k} {'ok' if v else 'FAILED'}" for k, v in checks.items())
            + " (delivery and per-link copies against the model; none of the paper's figures)")


def write_outputs(result: EmuResult, out: Path) -> tuple[Path, Path]:
    out.mkdir(parents=True, exist_ok=True)
    name = f"emulation-{slug(result.spec)}"
    png, js = out / f"{name}.png", out / f"{name}.json"
    plot(result, png)
    js.write_text(json.dumps(result.to_json(), indent=1) + "\n")
    return png, js
