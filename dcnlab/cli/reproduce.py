"""``dcnlab reproduce all`` (every reproduction in one run and one report, :mod:`dcnlab.report.reproduce_all`),
``dcnlab reproduce NAME`` for an installed reproduction plug-in (:func:`add_plugin_parsers`) and ``dcnlab reproduce
search`` (the sensitivity run over the settings the papers leave open, :mod:`dcnlab.report.search`): their parsers
and what they print."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from dcnlab.cli import emulate
from dcnlab.cli.argtypes import exclusive, ranged, seed, workers
from dcnlab.report import reproduce_all
from dcnlab.report import search as settings_search
from dcnlab.report import search_tables as search_tables
from dcnlab.reproduce.protocol import Reproduction
from dcnlab.results.outputs import output_dir
from dcnlab.results.summary import counts, counts_text
from dcnlab.sweep.pool import add_cluster_option


def cmd_reproduce_all(args: argparse.Namespace) -> int:
    from dcnlab.reproduce import registry

    emulate.bmv2_plan(args, "all")      # --emulate on without root or the toolchain: before anything is written
    exclusive(args, "--workers", "--cluster", why="the cluster's workers run the model")
    registry.every()                    # a plug-in that does not load: one line, before anything is written
    out = output_dir(args.out, "--out")
    for m in reproduce_all.PARTS:
        output_dir(str(out / m), "--out")
    mode = "smoke" if args.smoke else ("quick" if args.quick else "full")
    if args.no_cache:       # the model tasks' stored results (dcnlab.sweep.cache) are not used
        os.environ["DCNLAB_NO_CACHE"] = "1"
    done = reproduce_all.run(out, mode, args.emulate, args.workers, args.cluster, args.seed, args.bmv2_runs)
    return _print_run(args, done, out / "report.md")


def cmd_reproduce_one(args: argparse.Namespace) -> int:
    """``dcnlab reproduce NAME`` for a reproduction plug-in: its model part, its BMv2 experiment where it has one
    (as ``--emulate`` says), its outputs and ``summary.json`` in ``--out``."""
    from dcnlab.reproduce import registry

    name = args.reproduce_cmd
    rep = registry.get(name, f"reproduce {name}")      # one line when it does not load, before any work
    planned = emulate.bmv2_plan(args, name) if rep.has_emulation else None
    exclusive(args, "--workers", "--cluster", why="the cluster's workers run the model")
    return run_alone(rep.configure(args), args, args.out or f"results/{name}", planned)


def run_alone(rep: Reproduction, args: argparse.Namespace, out_option: str, planned: tuple[bool, str] | None
              ) -> int:
    """``dcnlab reproduce NAME``, a built-in's or a plug-in's: ``rep`` (as :meth:`~dcnlab.reproduce.protocol.
    Reproduction.configure` gave it from ``args``) through the runner of ``reproduce all`` into ``out_option``
    (checked here, after the options and before any work), then what it prints
    (:meth:`~dcnlab.reproduce.protocol.Reproduction.printed`, default its headlines' table) and its exit status;
    ``planned``: whether its BMv2 part runs and why (:func:`dcnlab.cli.emulate.bmv2_plan`)."""
    out = output_dir(out_option, "--out")
    mode = "smoke" if getattr(args, "smoke", False) else ("quick" if args.quick else "full")
    done = reproduce_all.run_one(rep, out, mode, args.emulate, args.workers, args.cluster,
                                 getattr(args, "seed", None), planned, getattr(args, "bmv2_runs", None))
    assert done.outcome is not None
    printed = rep.printed(done.outcome, bool(getattr(args, "json", False)))
    if printed is None:
        return _print_run(args, done, out / "summary.json")
    text, status = printed
    if "differ_from_full_run" in done.run:      # a quick run: its verdicts against the full run's, as every command
        from dcnlab.report.write import full_run_note

        if not getattr(args, "json", False):
            text = "\n".join([text, *full_run_lines(done)])
        elif text.startswith("{"):
            text = json.dumps({**json.loads(text), "differ_from_full_run": [
                {"paper": h.seed, "statement": h.statement, "verdict": h.model_verdict, "full_run": h.full_run}
                for h in done.heads if full_run_note(h)]}, default=str)
    print(text)
    return status


def full_run_lines(done: reproduce_all.AllRun) -> list[str]:
    """Under a quick run's table: how many of its verdicts differ from the full run's (the pre-registered row of
    each paper's sensitivity table, :func:`dcnlab.report.search_tables.full_run_verdicts`), each with its mark
    ``full run: <verdict>``, and the papers with no full run to compare with."""
    from dcnlab.report.write import MAX_TABLE_WIDTH, full_run_note

    if "differ_from_full_run" not in done.run:
        return []
    heads = done.heads
    known = {h.seed for h in heads if h.full_run}
    judged = [h for h in heads if h.full_run and h.model_verdict not in (None, "not run")]
    lines = ["", f"{done.run['differ_from_full_run']} of {len(judged)} quick model verdicts differ from the full "
                 "run's (each paper's", "sensitivity table, its pre-registered row):"]
    for h in heads:
        if full_run_note(h):
            mark = f": {h.model_verdict} ({full_run_note(h)})"
            w = max(20, MAX_TABLE_WIDTH - len(h.seed) - 3 - len(mark))
            lines.append(f"  {h.seed} {h.statement if len(h.statement) <= w else h.statement[:w - 1] + '…'}{mark}")
    missing = sorted({h.seed for h in heads} - known)
    if missing:
        lines.append(f"no full run to compare with: {', '.join(missing)}")
    return lines


def _print_run(args: argparse.Namespace, done: reproduce_all.AllRun, see: Path) -> int:
    from dcnlab.report.write import depends_lines, table_lines

    heads, run = done.heads, done.run
    if args.json:
        print(json.dumps({"run": run, "headlines": [h.to_json() for h in heads], **counts(heads),
                          "files": [str(f) for f in done.files]}))
    else:
        print("\n".join(table_lines(heads) + depends_lines(heads) + full_run_lines(done)))
        print(f"\n{counts_text(heads)}; {done.wall:.0f} s on {done.where} (model {done.model_seconds:.0f} s); "
              f"BMv2: {run['emulation_why']}")
        for f in done.files:
            print(f"wrote {f}")
    if done.bad:
        print(f"dcnlab: BMv2 experiments with failed checks or errors: {', '.join(done.bad)} (see {see})",
              file=sys.stderr)
    return 1 if done.bad else 0


def cmd_search(args: argparse.Namespace) -> int:
    from dcnlab.results.open_settings import NOTHING_TO_SEARCH
    from dcnlab.topos.errors import UserError
    from dcnlab.topos.inputs import quote

    searchable = settings_search.SEARCHABLE
    bad = [p for p in args.papers if p not in searchable]
    if bad:
        why = (" (nothing to search: its settings are pre-registered and their other readings run inside its own "
               "reproduction)" if bad[0] in NOTHING_TO_SEARCH else "")
        raise UserError(f"reproduce search: paper {quote(bad[0])} has no search{why}; valid: {', '.join(searchable)}")
    out = output_dir(args.out, "--out")
    papers = args.papers or list(searchable)
    for paper in papers:
        t0 = time.perf_counter()
        data, path = settings_search.search_and_write(
            paper, args.quick, args.draws, args.workers,
            (lambda m: print(m, file=sys.stderr, flush=True)) if args.verbose_search else (lambda m: None), out)
        print(search_tables.table_text(data))
        print(f"\n{paper}: {time.perf_counter() - t0:.0f} s; wrote {path}\n")
    return 0


def add_all_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("all", help="all five papers: every reproduction's model parts on every core, BMv2 where "
                                   "possible, one report (report.md, report.html, summary.json)",
                       description="Runs the model parts of reproduce aggregation (papers 000 and 003), multicast "
                                   "(001), congestion (002) and cist (004) in one process pool, then their BMv2 "
                                   "experiments (as --emulate says), and writes OUT/report.md, a self-contained "
                                   "OUT/report.html, OUT/summary.json (every headline: paper, model, BMv2, their "
                                   "verdicts and the headline's) "
                                   "and each part's outputs in OUT/<mechanism>/.")
    p.add_argument("--quick", action="store_true", help="fewer rounds, every headline (under 3 minutes on 2 cores "
                                                        "without BMv2; BMv2 experiments in their quick form)")
    emulate.emulate_option(p, "the four reproductions' BMv2 experiments, one after the other")
    p.add_argument("--out", default=reproduce_all.DEFAULT_OUT, metavar="DIR", help=f"output directory (default {reproduce_all.DEFAULT_OUT})")
    p.add_argument("--workers", type=workers(), help="model processes (default: every core)")
    add_cluster_option(p, "model tasks and readings")
    p.add_argument("--seed", type=seed(), help="base seed of the random draws (default: each command's, "
                                               "aggregation 1, cist 0)")
    p.add_argument("--no-cache", action="store_true", help="compute every model task again (default: a task whose "
                   "result is stored for the same code and arguments is not run again; DCNLAB_NO_CACHE=1 likewise)")
    p.add_argument("--json", action="store_true", help="print one JSON object (run, headlines, files)")
    p.add_argument("--smoke", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_reproduce_all)


def add_search_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("search", help="sensitivity of each paper's verdicts to the settings it leaves open: every "
                                      "admissible reading against the pre-registered one (a table per paper)",
                       description="For each paper with a sensitivity run, runs its pre-registered setting (each "
                                   "open setting's value fixed from the paper's text alone, "
                                   "dcnlab/results/open_settings.py) and every other admissible reading of one "
                                   "setting at a time, the rest pre-registered; prints each reading's verdicts "
                                   "beside the pre-registered setting's (a headline a reading flips 'depends on' "
                                   "that setting; the counts are the pre-registered setting's) and writes "
                                   "OUT/PAPER.json. No count of statements that hold chooses a setting.")
    p.add_argument("papers", nargs="*", metavar="PAPER",
                   help=f"papers to run (default: every one with a sensitivity run: "
                        f"{', '.join(settings_search.SEARCHABLE)})")
    p.add_argument("--quick", action="store_true", help="the reproduction's quick scale")
    p.add_argument("--draws", type=ranged(int, 1, 9), default=settings_search.DRAWS,
                   help=f"draws of a random setting (default {settings_search.DRAWS}; the median is judged)")
    p.add_argument("--out", default=settings_search.DEFAULT_OUT, help=f"output directory (default {settings_search.DEFAULT_OUT})")
    p.add_argument("--workers", type=workers(), help="processes (default: every core)")
    p.add_argument("--progress", dest="verbose_search", action="store_true", help="print each task as it ends")
    p.set_defaults(func=cmd_search)


def add_plugin_parsers(sub: argparse._SubParsersAction) -> None:
    """``dcnlab reproduce NAME`` for each installed reproduction plug-in (entry point group
    ``dcnlab.reproductions``; named, not loaded: a broken one fails when it is run, in one line)."""
    from dcnlab.reproduce import registry

    for name in registry.plugins():
        if name in sub.choices:
            continue
        p = sub.add_parser(name, help=f"the reproduction plug-in {name} (entry point group dcnlab.reproductions): "
                                      "its model part, its BMv2 experiment where it has one, summary.json",
                           description=f"Runs the reproduction {name} as dcnlab reproduce all runs it (its tasks on "
                                       "every core, its outputs and summary.json in --out, each headline judged by "
                                       "the report's rule) and prints its headlines.")
        p.add_argument("--quick", action="store_true", help="its quick mode (fewer rounds, every headline)")
        emulate.emulate_option(p, "its BMv2 experiment, where it has one")
        p.add_argument("--out", metavar="DIR", help=f"output directory (default results/{name})")
        p.add_argument("--workers", type=workers(), help="model processes (default: every core)")
        add_cluster_option(p, "model tasks")
        p.add_argument("--seed", type=seed(), help="base seed of its random draws (default: its own)")
        p.add_argument("--json", action="store_true", help="print one JSON object (run, headlines, files)")
        p.add_argument("--smoke", action="store_true", help=argparse.SUPPRESS)
        p.set_defaults(func=cmd_reproduce_one)
