"""What ``dcnlab bench multicast`` measures: sequential timings (no other worker running) of C-MR4LMS on every
pattern of 001, and MR4LMS against it on 100x50x26 (4 ppn)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from dcnlab.reproduce.multicast import model as multicast_model
from dcnlab.reproduce.multicast.model import (
    BIG,
    COLORS,
    GOAL_SECONDS,
    GOAL_SPEEDUP,
    PATTERNS_1PPN,
    PATTERNS_4PPN,
    run_pattern,
)


def bench(args: argparse.Namespace) -> int:
    """Sequential timings (no other worker running): C-MR4LMS on every pattern, MR4LMS on 100x50x26."""
    from dcnlab.controller.multicast.planning import plan
    pats = PATTERNS_1PPN + PATTERNS_4PPN
    rows: list[dict[str, Any]] = []
    for p in pats:
        h, wl = multicast_model._workload(run_pattern(p))
        for a in ("cmr4lms-fixed", "cmr4lms-dynamic") + (("mr4lms",) if p == BIG and not args.quick else ()):
            m = plan(h, wl, a, COLORS).metrics
            rows.append({"pattern": p, "algo": a, "groups": m.groups, "seconds": m.seconds,
                         "cpu_seconds": m.cpu_seconds})
            print(f"  {p:<26} {a:<16} {m.seconds:7.2f} s", file=sys.stderr, flush=True)
    worst = max((r for r in rows if r["algo"] != "mr4lms"), key=lambda r: r["seconds"])
    big = {r["algo"]: r["seconds"] for r in rows if r["pattern"] == BIG}
    speedup = big["mr4lms"] / max(big["cmr4lms-fixed"], big["cmr4lms-dynamic"]) if "mr4lms" in big else None
    summary = {"rows": rows, "max_cmr4lms_seconds": worst["seconds"], "goal_seconds": GOAL_SECONDS,
               "speedup_100x50x26": speedup, "goal_speedup": GOAL_SPEEDUP}
    if args.json:
        print(json.dumps(summary))
        return 0
    print(f"{'pattern':<26} {'algo':<16} {'groups':>6} {'wall s':>8} {'cpu s':>8}")
    for r in rows:
        print(f"{r['pattern']:<26} {r['algo']:<16} {r['groups']:>6} {r['seconds']:>8.2f} {r['cpu_seconds']:>8.2f}")
    from dcnlab.results.goals import verdict
    print(f"slowest C-MR4LMS pattern: {worst['seconds']:.2f} s ({worst['pattern']}, {worst['algo']}): "
          f"{verdict(worst['seconds'] <= GOAL_SECONDS, f'<= {GOAL_SECONDS:g} s')}")
    if speedup is not None:
        print(f"MR4LMS-like / C-MR4LMS on {BIG}: {speedup:.0f}x: {verdict(speedup >= GOAL_SPEEDUP, f'>= {GOAL_SPEEDUP:g}x')}")
    return 0
