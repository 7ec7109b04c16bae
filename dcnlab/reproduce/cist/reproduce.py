"""Parts of ``dcnlab reproduce cist`` (run as every reproduction is, :mod:`dcnlab.reproduce.cist.reproduction`): the
construction cost against N (:mod:`~dcnlab.reproduce.cist.opcount`, :mod:`~dcnlab.reproduce.cist.scaling`) and its
lines, and the ``--algo`` constructions (checked before any work; their rows in ``summary.json``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from dcnlab.results.outputs import writing


def scaling_outputs(out: Path, quick: bool, say: Callable[[str], None] | None = None
                    ) -> tuple[dict[str, Any], list[Path]]:
    """Theorems 5-7: count the construction's instructions against N (:func:`dcnlab.reproduce.cist.opcount.measure`,
    the judged figure, ``operations.png``) and, in the full run, time it too
    (:func:`dcnlab.reproduce.cist.scaling.measure`, a figure only, ``scaling.png``); ``scaling.json`` holds both
    (the counts under ``operations``; 004's headlines read it). (the measurement, the files)."""
    import json

    from dcnlab.reproduce.cist import opcount
    from dcnlab.reproduce.cist import scaling as cist_scaling

    ops = opcount.measure(quick, progress=say)
    data: dict[str, Any] = cist_scaling.measure(quick, progress=say) if not quick else {"slope": None}
    data["operations"] = ops
    with writing(out, "--out"):
        files = [opcount.plot(ops, out / "operations.png")]
        if data.get("points"):
            files.append(cist_scaling.plot(data, out / "scaling.png"))
        (out / "scaling.json").write_text(json.dumps(data, indent=1))
        return data, files + [out / "scaling.json"]


def scaling_lines(data: dict[str, Any]) -> list[str]:
    """The instruction counts' verdict and, where timed, the CPU-time slopes as a few lines of text."""
    from dcnlab.reproduce.cist import headlines, opcount
    from dcnlab.reproduce.cist import scaling as cs

    h = headlines.linear(data)
    lines = opcount.lines(data["operations"]) + [f"  worst {h.worst_at}: {h.model:+.1f}% per doubling; O(N) "
                                                  f"(at most 0%): {h.model_verdict}"]
    if data.get("slope") is None:
        return lines + ["  CPU time not measured (--quick; the full run times it, as a figure)"]
    ns = sorted({int(p["switches"]) for p in data["points"]})
    lines += [f"  CPU time (a figure, not judged): log-log slope of time vs N, balanced Dragonfly a = 2h, "
              f"N = {ns[0]:,}..{ns[-1]:,}; {data['statistic']}"]
    return lines + [f"    {line}" for line in cs.algorithm_lines(data)]


def plugin_refs(names: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """``(name as written, reference a worker resolves)`` of every ``--algo`` construction, checked before any
    work: a built-in is one :class:`~dcnlab.topos.errors.UserError` (the sweep runs the paper's already)."""
    from dcnlab.controller.cist.registry import get
    from dcnlab.controller.registry import portable
    from dcnlab.topos.errors import UserError

    for name in names:
        if get(name).builtin:
            raise UserError(f"--algo {name}: a built-in; the model sweep runs the paper's CISTs already (valid: an "
                            "installed plug-in, package.module:name or file.py:name)")
    return tuple((n, portable(n)) for n in dict.fromkeys(names))


def plugin_rows(cases: list[dict[str, Any]], names: Sequence[str]) -> list[dict[str, Any]]:
    """Each plug-in's name, origin and, per instance, its trees' survival: ``summary.json``'s ``algorithms``."""
    from dcnlab.controller.cist.registry import get

    out = []
    for n in names:
        a = get(n)
        per = {}
        for c in cases:
            r = c.get("algorithms", {}).get(n)
            if r is not None:
                per[c["spec"]] = {"k": r["k"], "diameters": r["diameters"], "build_seconds": r["build_seconds"],
                                  "no_loss_below_k": r["no_loss_below_k"],
                                  "adversary_lost_pairs": {kind: v["cists_lost"] for kind, v in r["adversary"].items()},
                                  "sweep_mean_delivered": [p["cists_mean"] for p in r["sweep"]]}
        out.append({"name": n, "origin": a.origin, "summary": a.summary, "instances": per})
    return out
