"""The report of ``dcnlab reproduce all``: ``report.md``, a self-contained ``report.html`` (every plot embedded)
and ``summary.json``, from the parts' headlines (:mod:`dcnlab.results.summary`) and the readings of the
headlines that deviate (:mod:`dcnlab.results.readings`)."""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dcnlab.results.goals import legend_lines
from dcnlab.results.open_settings import METHOD
from dcnlab.results.outputs import writing
from dcnlab.results.runs import runs_text
from dcnlab.results.summary import (
    COMBINED_RULE,
    EMULATION_GOAL_PERCENT,
    MIN_SEEDS,
    RULE,
    Headline,
    counts_text,
    quantile,
)

if TYPE_CHECKING:
    from dcnlab.report.parts import PartRun
    from dcnlab.reproduce.protocol import Reproduction
    from dcnlab.results.papers import Paper
    from dcnlab.results.readings import Reading

TABLE_NOTES = ("A verdict marked 'depends on <setting>' is one that another admissible reading of that open setting "
               "flips (the readings and their verdicts beside it): its figure and verdict are the pre-registered "
               "reading's. 'falsifier': the deliberately wrong mechanism, input or model that, fed through the same "
               "pipeline and rule, must be judged 'deviates' (or 'flat'); the tests run each (tests/test_falsifiers*.py).")

READINGS_INTRO = ("For each headline that deviates, every reading of the paper's text was implemented as a named "
                  "variant and measured at the paper's setting (quick runs: fewer rounds). The reading marked * is "
                  "the one the reproduction uses (the pre-registered reading); a reading marked x is one the paper's text "
                  "rules out, shown with its figure and the sentence that rules it out, never a candidate; 'holds' "
                  "applies the verdict rule to that reading's figure.")

MAX_TABLE_STATEMENT = 36
"""Characters of a headline's statement in the printed table (the table stays within 100 columns)."""
MAX_TABLE_WIDTH = 100
"""Columns of the printed table (a ``depends on`` line under a row is cut to it)."""
SHORT_FIGURE_VERDICT = {"reproduced": "yes", "trend": "trend", "unstable": "unstab.", "flat": "flat", "deviates": "no",
                        "inconsistent": "incons.", "not run": "not run", "not judged": "n/j",
                        None: "–"}
"""A figure's verdict in the printed table's 'holds' columns."""


def title(rep: Reproduction) -> str:
    """A part's section heading: what it reproduces and the papers, by id, method and authors."""
    return f"{rep.title}: " + " and ".join(f"{p.id} {p.label} ({p.short()})" for p in rep.papers)


def __getattr__(name: str) -> Any:
    """``SEEDS`` (each reproduction's paper ids) and ``TITLES`` (its section heading), by reproduction name."""
    from dcnlab.reproduce import registry

    if name == "SEEDS":
        return {rep.name: rep.paper_ids for rep in registry.every()}
    if name == "TITLES":
        return {rep.name: title(rep) for rep in registry.every()}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def all_papers() -> dict[str, Paper]:
    """Every reproduction's papers, by id in the order of the ids."""
    from dcnlab.reproduce import registry

    return dict(sorted({p.id: p for rep in registry.every() for p in rep.papers}.items()))


NUMBER_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def heading_text(n: int) -> str:
    """``dcnlab: the five papers reproduced``."""
    return f"dcnlab: the {NUMBER_WORDS[n] if n < len(NUMBER_WORDS) else n} paper{'s' if n != 1 else ''} reproduced"


PAPERS_INTRO = ("The papers are cited by the project's short labels 000-004 in the tables below. Where the papers' "
                "text (an extraction) does not print a field, the reference says so, or says which record of the "
                "same article it was read from.")


# -- the report --------------------------------------------------------------------------------------------------

def value_text(h: Headline, x: float | None) -> str:
    """A figure in the headline's unit: ``32.87%``, ``7``, ``0.61``."""
    if x is None:
        return "–"
    if h.kind == "percent" or h.unit.startswith("%"):
        return f"{x:.2f}%"
    if float(x).is_integer() and abs(x) < 1e9:
        return f"{x:.0f}"
    return f"{x:.3g}" if abs(x) < 100 else f"{x:.1f}"


def model_text(h: Headline) -> str:
    """The model's figure with its 95% interval (``32.29% ±0.41``) and, for a statement about every point, where its
    worst point lies and the mean over the points (``-5.1% at k=3; mean 2.28%``)."""
    text = value_text(h, h.model)
    if h.model is not None and h.spread:
        text += f" ±{value_text(h, quantile(h.spread_n) * h.spread).rstrip('%')}"
    if h.model is not None and h.seed_spreads and h.seeds and len(h.seeds) > 1:     # a run of replications
        text += f" ({h.spread_of or 'pooled'} over seeds " + ", ".join(h.seeds) + ")"
    if h.worst_at is not None and h.points and len(h.points) > 1:
        text += f" at {h.over + '=' if h.over and h.over not in h.worst_at else ''}{h.worst_at}"
        if h.mean is not None:
            text += f"; mean {value_text(h, h.mean)}"
    return text


def emulation_text(h: Headline) -> str:
    """BMv2's figure with its 95% interval and what it is over (``1.04 ±0.21 over 3 BMv2 runs``; a spread within
    one run: ``62.7% ±4.1``)."""
    text = value_text(h, h.emulation)
    if h.emulation is not None and h.emulation_spread:
        text += f" ±{value_text(h, quantile(h.emulation_spread_n) * h.emulation_spread).rstrip('%')}"
    if h.emulation is not None and h.emulation_runs and len(h.emulation_runs) > 1:
        text += f" over {runs_text(len(h.emulation_runs))}"
    return text


def paper_text(h: Headline) -> str:
    return h.paper_text or value_text(h, h.paper)


def diff_text(h: Headline) -> str:
    return "–" if h.difference is None else f"{h.difference:+.1f}%"


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def figure_verdict_text(v: str | None) -> str:
    """A figure's verdict in the report's tables (None: BMv2 does not measure this headline)."""
    return "–" if v is None else v


def verdict_text(h: Headline) -> str:
    """The headline's verdict, with ``BMv2 not run`` (or ``model not run``) where that figure is missing, and, in a
    quick run, the full run's verdict where it differs."""
    notes = [n for n in (h.note, full_run_note(h)) if n]
    return f"{h.verdict} ({'; '.join(notes)})" if notes else h.verdict


def depends_text(h: Headline) -> str:
    """``depends on threshold (12: deviates); cct-denominator (1062: deviates)``: the open setting whose readings
    flip the headline's verdict, with those readings (from ``depends_on``, or the reading's own ``depends on ...;``
    where ``depends_on`` names only the setting); empty when no reading flips it."""
    if not h.depends_on:
        return ""
    m = re.search(r"depends on (.+?); the figure", h.reading or "")
    first = h.depends_on.split(",")[0].split(" (")[0].strip()
    return f"depends on {m.group(1) if m and first in m.group(1) else h.depends_on}"


def table_verdict_text(h: Headline) -> str:
    """The verdict in the headline tables: :func:`verdict_text` with :func:`depends_text` among its notes."""
    notes = [n for n in (h.note, full_run_note(h), depends_text(h), h.stability if h.model_verdict == "unstable"
                         else "") if n]
    return f"{h.verdict} ({'; '.join(notes)})" if notes else h.verdict


Falsifiers = dict[tuple[str, str], str]
"""(paper id, statement) -> the headline's falsifier in one phrase."""


def falsifiers_of(reps: Sequence[Reproduction]) -> Falsifiers:
    """Every headline's falsifier in one phrase, from each reproduction's
    :meth:`~dcnlab.reproduce.protocol.Reproduction.falsifiers` (keyed by statement or ``"<paper>: <statement>"``)."""
    out: Falsifiers = {}
    for rep in reps:
        for key, phrase in (rep.falsifiers() or {}).items():
            paper, _, statement = key.partition(": ")
            if paper in rep.paper_ids and statement:
                out[(paper, statement)] = phrase
            else:
                out.update({(p, key): phrase for p in rep.paper_ids})
    return out


def falsifier_text(h: Headline, found: Falsifiers) -> str:
    """The headline's falsifier in one phrase, or ``–`` when its reproduction names none."""
    return found.get((h.seed, h.statement)) or "–"


def full_run_note(h: Headline) -> str:
    """``full run: deviates`` where a quick run's verdict differs from the full run's (empty otherwise)."""
    differs = h.full_run and h.model_verdict not in (None, "not run") and h.full_run != h.model_verdict
    return f"full run: {h.full_run}" if differs else ""


def table_lines(heads: Sequence[Headline]) -> list[str]:
    """The printed headline table (at most 100 columns): each figure with whether it holds (yes, trend, no, not
    run; '–': BMv2 does not measure it), and the headline's verdict."""
    p = max([4, *(len(h.seed) + 1 for h in heads)])      # a user's paper id may be longer than dcnlab's 000
    w = MAX_TABLE_STATEMENT - (p - 4)
    lines = [f"{'pap':<{p}}{'headline':<{w}} {'paper':>10} {'model':>9} {'holds':<7} {'BMv2':>9} {'holds':<7} verdict",
             "-" * (w + p + 56)]
    for h in heads:
        statement = f"{DEPENDS_MARK} {h.statement}" if h.depends_on else h.statement
        lines.append(f"{h.seed:<{p}}{_short(statement, w):<{w}} {_short(paper_text(h), 10):>10} "
                     f"{value_text(h, h.model):>9} {SHORT_FIGURE_VERDICT[h.model_verdict]:<7} "
                     f"{value_text(h, h.emulation):>9} {SHORT_FIGURE_VERDICT[h.emulation_verdict]:<7} {h.verdict}")
    return lines


DEPENDS_MARK = "(d)"
"""Before a headline in the printed table: a reading of an open setting flips its verdict (:func:`depends_lines`)."""


def depends_lines(heads: Sequence[Headline]) -> list[str]:
    """Under the printed table, one line per headline marked :data:`DEPENDS_MARK`: its paper, its statement (cut)
    and ``depends on <setting> (<reading>: <verdict>, ...)``, within 100 columns."""
    marked = [h for h in heads if h.depends_on]
    if not marked:
        return []
    out = [f"{DEPENDS_MARK} another reading of an open setting flips the verdict (shown: the pre-registered one's)"]
    for h in marked:
        out.append(_short(f"  {h.seed} {_short(h.statement, 40)}: {depends_text(h)}", MAX_TABLE_WIDTH))
    return out


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _pngs(part: PartRun) -> list[Path]:
    return sorted(part.out.glob("*.png"))


def model_vs_bmv2(heads: Sequence[Headline]) -> list[tuple[Headline, str]]:
    """Headlines with both a model and a BMv2 figure, with whether they agree within the goal."""
    out = []
    for h in heads:
        if h.model is not None and h.emulation is not None:
            d = h.difference
            ok = "–" if d is None else ("within" if abs(d) <= EMULATION_GOAL_PERCENT else "outside")
            out.append((h, ok))
    return out


def _paper_heading(pid: str) -> str:
    """``"003: Shuffle aggregation on BCube (IRS/SRS), Guo et al."`` for a paper's id; other keys as they are."""
    known = all_papers()
    return f"{pid}: {known[pid].name}, {known[pid].short()}" if pid in known else pid


def readings_text(readings: Sequence[Reading]) -> dict[str, str]:
    """Each paper's readings table (at most 100 columns), by paper id."""
    from dcnlab.results.readings import format_table
    papers: dict[str, list[Reading]] = {}
    for r in readings:
        papers.setdefault(r.headline[:3], []).append(r)
    return {paper: format_table(rows) for paper, rows in sorted(papers.items())}


def write_report(out: Path, parts: Sequence[PartRun], heads: Sequence[Headline], run: dict[str, Any],
                 readings: Sequence[Reading] = ()) -> list[Path]:
    """``summary.json``, ``report.md`` and ``report.html`` in ``out``."""
    from dcnlab.results import summary

    emu_parts = {p.mechanism: {"ran": p.emulation is not None, "why": p.emulation_why, "ok": p.emulation_ok}
                 for p in parts}
    ran = any(v["ran"] for v in emu_parts.values())
    why = "; ".join(f"{m}: {v['why']}" for m, v in emu_parts.items()) if ran else run["emulation_why"]
    with writing(out, "--out"):
        js = summary.write(out / "summary.json", [s for p in parts for s in p.reproduction.paper_ids], heads, ran, why,
                           run=run, parts={p.mechanism: {"seeds": list(p.reproduction.paper_ids),
                                                         "emulation": emu_parts[p.mechanism],
                                                         "model_seconds": round(p.seconds, 1),
                                                         "directory": p.mechanism} for p in parts},
                           readings=[dict(r.__dict__, holds=r.holds) for r in readings],
                           papers={r.id: r.to_json() for p in parts for r in p.reproduction.papers})
        md = out / "report.md"
        md.write_text(report_md(out, parts, heads, run, readings))
        page = out / "report.html"
        page.write_text(report_html(out, parts, heads, run, readings))
    return [md, page, js]


def part_costs(parts: Sequence[PartRun]) -> str:
    """What each part's model cost in the run: its tasks and when its last one was done, in the order they ended
    (``aggregation 1721 tasks, done at 347 s``); ``dcnlab bench reproduce`` gives their CPU seconds."""
    done = sorted((p for p in parts if p.tasks), key=lambda p: p.seconds)
    return "; ".join(f"{p.mechanism} {len(p.tasks)} task{'s' if len(p.tasks) != 1 else ''}, done at {p.seconds:.0f} s"
                     for p in done)


def _intro(run: dict[str, Any], heads: Sequence[Headline], parts: Sequence[PartRun] = ()) -> tuple[str, str]:
    kind = {"full": "full run", "quick": "quick run (--quick: fewer rounds)", "smoke": "smoke test (a few points)"}
    seeds = ("each command's default seeds" if run["seed"] is None else f"base seed {run['seed']}") + \
        f" (a random figure's rounds or draws span several seeds; a verdict near an edge must hold at {MIN_SEEDS})"
    costs = part_costs(parts)
    how = (f"{kind[run['mode']]}, {run['date']}, {run['wall_seconds']:.0f} s on {run['workers']} workers "
           + (f"of the Dask cluster {run['cluster']} " if run.get("cluster") else "")
           + f"({run['cpus']} CPUs; model parts {run['model_seconds']:.0f} s"
           + (f": {costs}" if costs else "") + f"), {seeds}")
    return how, counts_text(heads)


def report_md(out: Path, parts: Sequence[PartRun], heads: Sequence[Headline], run: dict[str, Any],
              readings: Sequence[Reading] = ()) -> str:
    how, verdicts = _intro(run, heads, parts)
    known = all_papers()
    lines = [f"# {heading_text(len(known))}", "", f"Generated by `dcnlab reproduce all`: {how}.", "",
             f"**{verdicts}.**", "", "## Papers", "", PAPERS_INTRO, ""]
    lines += [f"- **{i}** {p.name}: {p.reference()}" + (f" (Read from {p.record}.)" if p.record else "")
              for i, p in known.items()]
    lines += ["", "## Verdict rule", "", RULE, "", *[f"- {line}" for line in legend_lines()], "",
              "## Method", "", METHOD, "",
             "## BMv2", "", f"`--emulate {run['emulate']}`: {run['emulation_why']}.", ""]
    lines += [f"- {p.mechanism}: {p.emulation_why}" + ("" if p.emulation_ok is not False else " (checks FAILED)")
              for p in parts]
    lines += ["", "## Headlines", "", COMBINED_RULE + " " + TABLE_NOTES, "",
              "| paper | headline | paper's figure | model | BMv2 | unit | model vs BMv2 | falsifier | tolerance | "
              "model verdict | BMv2 verdict | verdict |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    found = falsifiers_of([p.reproduction for p in parts])
    for h in heads:
        lines.append(f"| {h.seed} | {_md_cell(h.statement)} | {_md_cell(paper_text(h))} | {_md_cell(model_text(h))} | "
                     f"{_md_cell(emulation_text(h))} | {_md_cell(h.unit)} | {diff_text(h)} | "
                     f"{_md_cell(falsifier_text(h, found))} | {_md_cell(h.tolerance)} | "
                     f"{figure_verdict_text(h.model_verdict)} | {figure_verdict_text(h.emulation_verdict)} | "
                     f"**{h.verdict}**{_md_cell(table_verdict_text(h)[len(h.verdict):])} |")
    pairs = model_vs_bmv2(heads)
    lines += ["", "## Model against BMv2", "",
              f"Every headline with both figures; the goal is agreement within {EMULATION_GOAL_PERCENT:g}% of the model's."
              + ("" if pairs else " No BMv2 experiment ran."), ""]
    if pairs:
        lines += [f"| paper | headline | model | BMv2 | difference | within {EMULATION_GOAL_PERCENT:g}% |", "|---|---|---|---|---|---|"]
        lines += [f"| {h.seed} | {_md_cell(h.statement)} | {value_text(h, h.model)} | {_md_cell(emulation_text(h))} | "
                  f"{diff_text(h)} | {ok} |" for h, ok in pairs]
    tables = readings_text(readings)
    if tables:
        lines += ["", "## Readings of the headlines that deviate", "", READINGS_INTRO, ""]
        for paper, text in tables.items():
            lines += [f"### {_paper_heading(paper)}", "", "```", text, "```", ""]
    from dcnlab.report.search_tables import SEARCH_INTRO, report_tables
    searches = report_tables(out / "search")     # one setting per paper, the one its search chose
    if searches:
        lines += ["", "## Settings the papers leave open", "", SEARCH_INTRO, ""]
        for paper, text in searches.items():
            lines += [f"### {_paper_heading(paper)}", "", "```", text, "```", ""]
    for p in parts:
        rep = p.reproduction
        lines += ["", f"## {title(rep)}", ""]
        lines += [f"{r.id}: {r.reference()}" + "  " for r in rep.papers]
        lines += ["", f"`dcnlab reproduce {p.mechanism}`'s outputs are in `{p.mechanism}/` (model parts "
                  f"{p.seconds:.0f} s). BMv2: {p.emulation_why}.", "", "Readings (how each figure of ours was "
                  "obtained):", ""]
        for h in heads:
            if h.seed in rep.paper_ids:
                lines.append(f"- **{h.seed}, {_md_cell(h.statement)}** ({verdict_text(h)}): "
                             f"{_md_cell(h.reading) or '–'}")
        lines += ["", "Plots:", ""]
        for png in _pngs(p):
            rel = f"{p.mechanism}/{png.name}"
            lines += [f"- `{rel}`", "", f"  ![{png.stem}]({rel})", ""]
    return "\n".join(lines) + "\n"


CSS = """body{font-family:sans-serif;max-width:1200px;margin:1em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;font-size:13px;margin:0.5em 0}th,td{border:1px solid #ccc;padding:3px 6px;
vertical-align:top}th{background:#f0f0f0}td.num{text-align:right;white-space:nowrap}
.reproduced{background:#dff0d8}.trend{background:#fcf8e3}.deviates{background:#f2dede}.not-run{background:#eee}
.model-only,.BMv2-only{background:#fde5c8}.unstable,.flat{background:#e8e0f5}.inconsistent{background:#d9e6f2}td.verdict{font-weight:bold}.note{font-weight:normal;font-size:11px}
img{max-width:100%;border:1px solid #ddd;margin:0.5em 0}figcaption{font-size:12px;color:#555}
li{margin:0.2em 0}
.scroll{max-width:100%;overflow-x:auto;margin:0.5em 0}.scroll table{margin:0}
table.headlines td:first-child+td{min-width:14em}table.headlines td.num{white-space:normal}
table.headlines tr>:last-child{position:sticky;right:0;box-shadow:-2px 0 3px rgba(0,0,0,0.15)}
table.headlines th:last-child{background:#f0f0f0}:where(td.verdict){background:#fff}"""
"""The headline table fits its box or scrolls in it (``.scroll``) with its verdict column held at the box's
right edge (sticky): at 1,400 pixels the verdict was cut off the page."""


def report_html(out: Path, parts: Sequence[PartRun], heads: Sequence[Headline], run: dict[str, Any],
                readings: Sequence[Reading] = ()) -> str:
    """One page, every PNG embedded as a data URI (the file can be mailed or opened anywhere)."""
    e = html.escape
    how, verdicts = _intro(run, heads, parts)
    known = all_papers()
    body = [f"<h1>{heading_text(len(known))}</h1><p>Generated by <code>dcnlab reproduce all</code>: {e(how)}."
            f"</p><p><b>{e(verdicts)}.</b></p>", f"<h2>Papers</h2><p>{e(PAPERS_INTRO)}</p><ul>"]
    body += [f"<li id='paper-{i}'><b>{i}</b> {e(p.name)}: {e(p.reference())}"
             + (f" (Read from {e(p.record)}.)" if p.record else "") + "</li>" for i, p in known.items()]
    body += ["</ul>", f"<h2>Verdict rule</h2><p>{e(RULE)}</p><ul>"
             + "".join(f"<li>{e(line)}</li>" for line in legend_lines()) + f"</ul><h2>Method</h2><p>{e(METHOD)}</p>",
            f"<h2>BMv2</h2><p><code>--emulate {e(run['emulate'])}</code>: {e(run['emulation_why'])}.</p><ul>"]
    body += [f"<li>{e(p.mechanism)}: {e(p.emulation_why)}{'' if p.emulation_ok is not False else ' (checks FAILED)'}"
             f"</li>" for p in parts]
    body.append(f"</ul><h2>Headlines</h2><p>{e(COMBINED_RULE + ' ' + TABLE_NOTES)}</p><div class=scroll>"
                "<table class=headlines><tr><th>paper</th><th>headline</th>"
                "<th>paper's figure</th><th>model</th><th>BMv2</th><th>unit</th><th>model vs BMv2</th>"
                "<th>falsifier</th><th>tolerance</th>"
                "<th>model verdict</th><th>BMv2 verdict</th><th>verdict</th></tr>")
    found = falsifiers_of([p.reproduction for p in parts])

    def cls(v: str | None) -> str:
        return "" if v is None else v.replace(" ", "-")

    for h in heads:
        note = (f"<br><span class=note>{e(table_verdict_text(h)[len(h.verdict):].strip()[1:-1])}</span>"
                if table_verdict_text(h) != h.verdict else "")
        body.append(f"<tr><td>{e(h.seed)}</td><td>{e(h.statement)}</td><td class=num>{e(paper_text(h))}</td>"
                    f"<td class=num>{e(model_text(h))}</td><td class=num>{e(emulation_text(h))}</td>"
                    f"<td>{e(h.unit)}</td><td class=num>{e(diff_text(h))}</td>"
                    f"<td class=note>{e(falsifier_text(h, found))}</td><td>{e(h.tolerance)}</td>"
                    f"<td class='{cls(h.model_verdict)}'>{e(figure_verdict_text(h.model_verdict))}</td>"
                    f"<td class='{cls(h.emulation_verdict)}'>{e(figure_verdict_text(h.emulation_verdict))}</td>"
                    f"<td class='verdict {cls(h.verdict)}'>{e(h.verdict)}{note}</td></tr>")
    body.append("</table></div>")
    pairs = model_vs_bmv2(heads)
    body.append(f"<h2>Model against BMv2</h2><p>Every headline with both figures; the goal is agreement within "
                f"{EMULATION_GOAL_PERCENT:g}% of the model's.{'' if pairs else ' No BMv2 experiment ran.'}</p>")
    if pairs:
        body.append("<table><tr><th>paper</th><th>headline</th><th>model</th><th>BMv2</th><th>difference</th>"
                    f"<th>within {EMULATION_GOAL_PERCENT:g}%</th></tr>")
        body += [f"<tr><td>{e(h.seed)}</td><td>{e(h.statement)}</td><td class=num>{e(value_text(h, h.model))}</td>"
                 f"<td class=num>{e(emulation_text(h))}</td><td class=num>{e(diff_text(h))}</td>"
                 f"<td>{e(ok)}</td></tr>" for h, ok in pairs]
        body.append("</table>")
    tables = readings_text(readings)
    if tables:
        body.append(f"<h2>Readings of the headlines that deviate</h2><p>{e(READINGS_INTRO)}</p>")
        body += [f"<h3>{e(_paper_heading(paper))}</h3><pre>{e(text)}</pre>" for paper, text in tables.items()]
    from dcnlab.report.search_tables import SEARCH_INTRO, report_tables
    searches = report_tables(out / "search")
    if searches:
        body.append(f"<h2>Settings the papers leave open</h2><p>{e(SEARCH_INTRO)}</p>")
        body += [f"<h3>{e(_paper_heading(paper))}</h3><pre>{e(text)}</pre>" for paper, text in searches.items()]
    for p in parts:
        rep = p.reproduction
        body.append(f"<h2>{e(title(rep))}</h2><p>"
                    + "<br>".join(f"{r.id}: {e(r.reference())}" for r in rep.papers) + "</p>")
        body.append(f"<p>Outputs of <code>dcnlab reproduce {e(p.mechanism)}</code> in "
                    f"<code>{e(p.mechanism)}/</code> (model parts {p.seconds:.0f} s). BMv2: {e(p.emulation_why)}.</p>"
                    "<p>Readings (how each figure of ours was obtained):</p><ul>")
        body += [f"<li><b>{e(h.seed)}, {e(h.statement)}</b> ({e(verdict_text(h))}): {e(h.reading) or '–'}</li>"
                 for h in heads if h.seed in rep.paper_ids]
        body.append("</ul><p>Plots:</p>")
        for png in _pngs(p):
            data = base64.b64encode(png.read_bytes()).decode("ascii")
            body.append(f"<figure><img alt='{e(png.stem)}' src='data:image/png;base64,{data}'>"
                        f"<figcaption>{e(p.mechanism)}/{e(png.name)}</figcaption></figure>")
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{e(heading_text(len(known)))}</title>"
            f"<style>{CSS}</style></head><body>" + "\n".join(body) + "</body></html>\n")
