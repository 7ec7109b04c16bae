"""The searches of the papers' open settings as text (:mod:`dcnlab.report.search` runs them): one table per paper,
the committed searches (``dcnlab/results/search_tables/``) and the open settings of each paper, as ``reproduce
search`` prints them and ``reproduce all``'s report shows them."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from dcnlab.report.search import Judged, _num


def table_text(data: Mapping[str, Any], width: int = 100) -> str:
    """The search table of one paper: setting -> statements holding (the chosen one marked ``*``), then the
    statements that differ between settings, with each setting's figure (range over draws, median judged)."""
    import textwrap

    cands = data["candidates"]
    chosen = data["chosen"]
    total = max((c["total"] for c in cands), default=0)
    lines = [f"search of {data['paper']}: {len(cands)} settings, {data['draws']} draws where random"
             + (" (quick)" if data.get("quick") else "") + f"; {data.get('date', '')}"]
    lines += textwrap.wrap(f"choice: {data['rule']}", width)
    if data.get("note"):
        lines += textwrap.wrap(f"what ran: {data['note']}", width)
    names = [s["name"] for s in data["settings"]]
    widths = [max(len(n), *(len(c["setting"][n]) for c in cands)) for n in names]
    runner = data.get("runner_up")
    for label, setting in ((("pre-registered" if data.get("preregistered") else "chosen"), chosen),
                           ("runner-up", runner)):
        c = next((c for c in cands if c["setting"] == setting), None)
        if c is not None:
            lines += textwrap.wrap(f"{label}: " + ", ".join(f"{k}={v}" for k, v in setting.items())
                                   + f" ({c['holding']} of {c['total']} statements hold)", width,
                                   subsequent_indent="    ")
    for d in data.get("dropped", []):
        lines += textwrap.wrap(f"not a candidate: {d['name']}={d['value']}, {d['why']}", width,
                               subsequent_indent="    ")
    lines.append("  " + " ".join(f"{n:<{w}}" for n, w in zip(names, widths)) + f" {'holds':>7}  draws")
    for c in cands:
        mark = "*" if c["setting"] == chosen else "2" if c["setting"] == runner else " "
        lines.append(f"{mark} " + " ".join(f"{c['setting'][n]:<{w}}" for n, w in zip(names, widths))
                     + f" {c['holding']:>3}/{total:<3}  {c['draws'] if c['random'] else 1:>5}")
    def holds(i: int) -> set[bool]:
        return {c["statements"][i]["verdict"] == "reproduced" for c in cands}

    def figures(i: int) -> set[Any]:
        return {tuple(c["statements"][i]["values"]) for c in cands}

    differ = [i for i in range(total) if len(holds(i)) > 1]
    moved = [i for i in range(total) if holds(i) == {False} and len(figures(i)) > 1]
    for title, rows in (("statements that hold under some settings only (yes/no; the figure, a range over the "
                         "draws):", differ),
                        ("statements that hold under no setting, whose figure the settings move:", moved)):
        if not rows:
            continue
        lines.append("")
        lines.append(title)
        for i in rows:
            st = cands[0]["statements"][i]
            lines += textwrap.wrap(f"- {st['statement']} (paper {_num(st['paper'])})", width)
            for label, group in by_setting(cands, i, names):
                shown, ok = _shown(group[0], i)
                mark = "*" if any(c["setting"] == chosen for c in group) else " "
                lines += textwrap.wrap(f"{'yes' if ok else 'no ':<4}{shown}: {label}", width,
                                       initial_indent=f"    {mark} ", subsequent_indent="        ")
    for b in data.get("bounds", []):
        lines.append("")
        lines += textwrap.wrap(f"bound: {b['statement']}: paper {b['figure']}; under the stated rule ({b['rule']}) "
                               f"at least {b['bound']}, ours {b['ours']}; the reading '{b['reading']}' gives "
                               f"{b['reading_figure']} (bound {b['reading_bound']}). {b['how']}", width)
    return "\n".join(lines)


def _shown(c: Mapping[str, Any], i: int) -> tuple[str, bool]:
    """Statement ``i`` of candidate ``c`` as the table shows it: its figure (a range over the draws), holds."""
    s = c["statements"][i]
    j = Judged(s["statement"], s["paper"], s["values"], s["median"], s["verdict"], s.get("spread"))
    return j.range_text() + ("" if j.holds or j.verdict in ("deviates", "trend") else f" [{j.verdict}]"), j.holds


def by_setting(cands: Sequence[Mapping[str, Any]], i: int, names: Sequence[str],
               ) -> list[tuple[str, list[Mapping[str, Any]]]]:
    """The candidates grouped by the settings statement ``i`` depends on (in list order), each group with its
    label (``name=value, ...``; ``every setting`` when it depends on none). A setting counts when changing it
    alone changes the statement's figure or verdict for some candidate; candidates that agree on every setting
    that counts differ only in settings that never move it, so a group shows one figure."""
    def matters(n: str) -> bool:
        seen: dict[tuple[str, ...], tuple[str, bool]] = {}
        for c in cands:
            key = tuple(c["setting"][m] for m in names if m != n)
            if seen.setdefault(key, _shown(c, i)) != _shown(c, i):
                return True
        return False

    relevant = [n for n in names if matters(n)]
    groups: dict[tuple[str, ...], list[Mapping[str, Any]]] = {}
    for c in cands:
        groups.setdefault(tuple(c["setting"][n] for n in relevant), []).append(c)
    return [(", ".join(f"{n}={v}" for n, v in zip(relevant, key)) or "every setting", group)
            for key, group in groups.items()]


def stored_tables(out: Path | None = None) -> dict[str, dict[str, Any]]:
    """Each paper's search: the one in ``out`` (a newer run of ``dcnlab reproduce search``) where present, else
    the committed one (:func:`open_settings.stored_search`)."""
    from dcnlab.results.open_settings import PAPERS, stored_search

    found = {}
    for paper in PAPERS:
        path = out / f"{paper}.json" if out is not None else None
        if path is not None and path.is_file():
            try:
                found[paper] = json.loads(path.read_text())
                continue
            except ValueError:
                pass
        s = stored_search(paper)
        if s is not None:
            found[paper] = s
    return found


def preregistered_row(data: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The row of a paper's sensitivity table run under the pre-registered setting
    (:func:`dcnlab.results.open_settings.preregistered`: every setting the row names at its pre-registered value,
    whatever row ``chosen`` names or the counts of statements that hold), or None when the table has no such row."""
    from dcnlab.results.open_settings import preregistered

    pre = preregistered(data["paper"])
    return next((c for c in data["candidates"] if all(pre.get(n, v) == v for n, v in c["setting"].items())), None)


def full_run_verdicts(out: Path | None = None) -> dict[tuple[str, str], str]:
    """(paper, statement) -> the model verdict of the statement in the full run of the current code's setting: the
    pre-registered row of each paper's sensitivity table at the full scale (the committed tables, or newer ones in
    ``out``; a quick table is no full run): what a quick run's verdicts are compared with. 004 has no table
    (:data:`~dcnlab.results.open_settings.NOTHING_TO_SEARCH`), so no full run to compare with."""
    found: dict[tuple[str, str], str] = {}
    for paper, data in stored_tables(out).items():
        if data.get("quick"):
            continue
        for st in (preregistered_row(data) or {}).get("statements", []):
            found[(paper, st["statement"])] = st["verdict"]
    return found


def mark_full_run(heads: Sequence[Any], out: Path | None = None) -> int:
    """Give each headline of a quick run the full run's verdict of its statement (``full_run``), where a search
    knows it; returns how many differ from the quick run's model verdict (the report marks them)."""
    full = full_run_verdicts(out)
    differ = 0
    for h in heads:
        v = full.get((h.seed, h.statement))
        if v is not None:
            h.full_run = v
            differ += v != h.model_verdict and h.model_verdict != "not run"
    return differ


def mark_summary(path: Path, out: Path | None = None) -> int:
    """Mark the headlines of a quick run's ``summary.json`` at ``path`` with the full run's verdicts
    (:func:`mark_full_run`; ``out``: newer tables) and rewrite it, ``differ_from_full_run`` the count of quick
    verdicts that differ: what every quick ``reproduce`` command does, ``reproduce all`` per part."""
    from dcnlab.results import summary
    from dcnlab.results.outputs import writing

    data = json.loads(path.read_text())
    heads = summary.read(path).headlines
    differ = mark_full_run(heads, out)
    for rec, h in zip(data["headlines"], heads):
        rec["full_run"] = h.full_run
    data["differ_from_full_run"] = differ
    with writing(path, "--out"):
        path.write_text(json.dumps(data, indent=1) + "\n")
    return differ


SEARCH_INTRO = ("The settings each paper leaves open (dcnlab/results/open_settings.py, each with the sentence that "
                "leaves it open) are pre-registered from the paper's text alone: the reading the text supports best, "
                "with its sentence and argument, or the simplest reading where the text gives no ground; no result, "
                "count of statements that hold, or figure of the paper chose them. A reading that contradicts the "
                "text is never run as one (it is listed with the paper's sentence). Every other admissible reading "
                "ran as a sensitivity reading, one setting at a time with the rest pre-registered (dcnlab reproduce "
                "search), judged by the same verdict rule as the headlines; the tables below show each reading's "
                "verdicts beside the pre-registered setting's. A headline whose verdict some reading flips is marked "
                "'depends on <setting>' in the headline table, with those readings; its figure, its verdict and the "
                "headline counts are the pre-registered setting's.")


def settings_text(paper: str, chosen: Mapping[str, str] | None = None, width: int = 100) -> str:
    """The open settings of ``paper`` as a list: name, candidates (the value the search ``chosen`` marked
    ``chosen``, the one run before the search ``before``), the sentence that leaves it open."""
    import textwrap

    from dcnlab.results.open_settings import settings

    lines = []
    for o in settings(paper):
        marks = {v: [w for w, on in (("chosen", (chosen or {}).get(o.name) == v), ("before", v == o.default)) if on]
                 for v in o.values}
        vals = ", ".join(v + (f" ({', '.join(marks[v])})" if marks[v] else "") for v in o.values)
        head = f"- {o.name}: {o.what}; {vals}" + ("" if o.searched else " [not searched]")
        lines += textwrap.wrap(head, width, subsequent_indent="    ")
        lines += textwrap.wrap(f'"{o.sentence}" ({o.where})', width, initial_indent="    ", subsequent_indent="    ")
        if o.note:
            lines += textwrap.wrap(o.note, width, initial_indent="    ", subsequent_indent="    ")
    return "\n".join(lines)


def report_tables(out: Path | None = None) -> dict[str, str]:
    """Each paper's open settings and its search table as text (the report's section "Settings the papers
    leave open"); a paper without a search shows its list only."""
    import textwrap

    from dcnlab.results.open_settings import NOTHING_TO_SEARCH, PAPERS

    found = stored_tables(out)
    return {paper: settings_text(paper, found[paper]["chosen"] if paper in found else None)
            + ("\n\n" + table_text(found[paper]) if paper in found else
               "\n\n" + "\n".join(textwrap.wrap("nothing to search: " + NOTHING_TO_SEARCH[paper], 100))
               if paper in NOTHING_TO_SEARCH else
               "\n\nno search yet: the reproduction runs the values marked (before)")
            for paper in PAPERS}
