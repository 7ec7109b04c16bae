"""``dcnlab plan …`` and ``dcnlab reproduce …``: one subcommand per paper mechanism.

Each mechanism keeps its CLI in ``dcnlab/cli/<mechanism>.py``, which may define
``add_plan_parser(sub)``, ``add_reproduce_parser(sub)`` and ``add_bench_parser(sub)``. This module
only collects them, so that the mechanisms stay independent of each other.
"""

from __future__ import annotations

import argparse
import importlib
from types import ModuleType

MECHANISMS = ("aggregation", "multicast", "congestion", "cist")


def mechanism_modules() -> list[ModuleType]:
    return [importlib.import_module(f"dcnlab.cli.{m}") for m in MECHANISMS]


def _register(sub: argparse._SubParsersAction, hook: str) -> None:
    for mod in mechanism_modules():
        add = getattr(mod, hook, None)
        if add is not None:
            add(sub)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("plan", help="compute a mechanism's trees/state on a fabric (model backend, no emulation)")
    psub = p.add_subparsers(dest="plan_cmd", required=True, metavar="MECHANISM")
    _register(psub, "add_plan_parser")
    from dcnlab import view
    for name in ("multicast", "aggregation", "cist", "congestion"):   # --view: the plan's trees/flows in the browser
        view.add_view_option(psub.choices[name], "the plan (its fabric and trees, or its tenants' flows)")
        psub.choices[name].set_defaults(func=view.wrap_plan(psub.choices[name].get_default("func")))
    from dcnlab.cli import cluster as cluster_cmd
    cluster_cmd.add_plan_parser(psub)     # not a mechanism: a fabric over N machines (dcnlab run --servers)
    r = sub.add_parser("reproduce", help="reproduce a paper's headline numbers (model parts, and BMv2 parts as "
                                         "--emulate auto|on|off says)")
    rsub = r.add_subparsers(dest="reproduce_cmd", required=True, metavar="MECHANISM")
    _register(rsub, "add_reproduce_parser")
    from dcnlab.cli import reproduce
    reproduce.add_all_parser(rsub)       # all of the above in one run and one report
    reproduce.add_plugin_parsers(rsub)   # reproduce NAME: a user's reproduction (entry points dcnlab.reproductions)
    reproduce.add_search_parser(rsub)    # the settings the papers leave open, searched


def add_bench_parsers(bsub: argparse._SubParsersAction) -> None:
    _register(bsub, "add_bench_parser")
