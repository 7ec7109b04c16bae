"""``--emulate auto|on|off``, the one option of every ``dcnlab reproduce`` command that says whether its BMv2 parts run.

Every reproduction has model parts and BMv2 parts. The model parts always run; the BMv2 parts (real packets
through BMv2 switches and Mininet hosts, checked against the model) run after them, as ``--emulate`` says:

* ``auto`` (the default): where root and the P4 toolchain (``simple_switch_grpc``, ``simple_switch_CLI``,
  ``p4c``) are present, else not, and the outputs (``summary.json``) say why not;
* ``on``: required; without root or the toolchain the command stops with one line naming what is missing,
  before any work and before ``--out`` is touched;
* ``off``: the model parts only.

Earlier spellings still parse, each with a one-line notice on stderr (:data:`NOTICE`): a bare ``--emulate``
(``--emulate on``; in ``reproduce aggregation``, ``multicast`` and ``congestion`` it used to run BMv2 *instead
of* the model, and now runs both) and ``reproduce congestion --model`` (``--emulate off``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from dcnlab.cli.argtypes import ranged
from dcnlab.cli.errors import UserError

MODES = ("auto", "on", "off")
DEFAULT = "auto"
NOTICE = ": notice: "
"""What a notice line holds (``dcnlab reproduce congestion: notice: ...``), where an error line has ``: error: ``."""
MEANING = ("the model parts always run, then the BMv2 parts ({bmv2}): auto, where root and the P4 toolchain are "
           "present; on, required (without them, one error line before any work); off, model only")


def notice(parser: argparse.ArgumentParser, text: str) -> None:
    """One line on stderr about an old spelling that still works."""
    print(f"{parser.prog}{NOTICE}{text}", file=sys.stderr, flush=True)


class EmulateAction(argparse.Action):
    """``--emulate MODE``; a bare ``--emulate`` (the old switch) is ``on``, with a notice (``was``: what the switch
    did before, when that differs). Its ``--help`` shows ``--emulate {auto,on,off}``: the bare form is not
    advertised (:class:`dcnlab.cli.examples.HelpFormatter` reads :attr:`value_shown_required`)."""

    value_shown_required = True

    def __init__(self, option_strings: list[str], dest: str, was: str = "", **kw: Any) -> None:
        self.was = was
        super().__init__(option_strings, dest, nargs="?", const=None, choices=MODES, default=DEFAULT, **kw)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        if values is None:
            notice(parser, "a bare --emulate is the old spelling of --emulate on: the model parts, then the BMv2 "
                           f"experiment{f' ({self.was})' if self.was else ''}; write --emulate on")
            values = "on"
        setattr(namespace, self.dest, values)


def check_spelled(argv: Sequence[str]) -> None:
    """``--emulate=VALUE`` with a value that is not a mode is an error, also where argparse would read it as the bare
    switch (it drops an explicit ``--``: ``--emulate=--`` reached :class:`EmulateAction` as a bare ``--emulate``)."""
    for word in argv:
        if word == "--":
            return
        if word.startswith("--emulate="):
            value = word.split("=", 1)[1]
            if value not in MODES:
                raise UserError(f"argument --emulate: invalid choice {value!r}; valid: {', '.join(MODES)}")


class _Alias(argparse.Action):
    """An old switch that stands for ``--emulate VALUE``, with a notice."""

    def __init__(self, option_strings: list[str], dest: str, value: str = "off", **kw: Any) -> None:
        self.value = value
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kw)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        notice(parser, f"{option_string} is the old spelling of --emulate {self.value}; write --emulate {self.value}")
        namespace.emulate = self.value


def emulate_option(p: argparse.ArgumentParser, bmv2: str, was: str = "", aliases: Sequence[tuple[str, str]] = ()
                   ) -> None:
    """``--emulate auto|on|off`` on a ``reproduce`` command whose BMv2 parts are ``bmv2`` (a few words for the
    help); ``was``: what a bare ``--emulate`` did before, when not what ``on`` does; ``aliases``: old switches and
    the mode each stands for (``("--model", "off")``), hidden from ``--help``, each exclusive with ``--emulate``."""
    group = p.add_mutually_exclusive_group() if aliases else p
    old = [f"a bare --emulate is on{f' ({was})' if was else ''}", *(f"{a} is {v}" for a, v in aliases)]
    group.add_argument("--emulate", action=EmulateAction, was=was,
                       help=f"{MEANING.format(bmv2=bmv2)} (default: {DEFAULT}). Old spellings still work, with a "
                            f"notice: {'; '.join(old)}")
    for flag, value in aliases:
        group.add_argument(flag, action=_Alias, value=value, help=argparse.SUPPRESS)
    bmv2_runs_option(p)


MAX_BMV2_RUNS = 100
"""The most runs ``--bmv2-runs`` asks for."""


def bmv2_runs_option(p: argparse.ArgumentParser) -> None:
    """``--bmv2-runs N`` (1..:data:`MAX_BMV2_RUNS`): how many times the BMv2 experiments run, their figures the
    mean over the runs with its standard error (:mod:`dcnlab.results.runs`); default 3 in a full run, 1 with
    --quick. Every ``reproduce`` command has it, beside ``--emulate``."""
    p.add_argument("--bmv2-runs", type=ranged(int, 1, MAX_BMV2_RUNS), metavar="N",
                   help="run each BMv2 experiment N times (run 1 in the output directory, run i in its bmv2-run-i/); "
                        "each BMv2 figure is the mean over the runs with its standard error, judged with its 95%% "
                        "interval (default: 3 in a full run, 1 with --quick)")


def bmv2_plan(args: argparse.Namespace, command: str, missing: Callable[[], list[str]] | None = None
              ) -> tuple[bool, str]:
    """Whether the BMv2 parts of ``dcnlab reproduce COMMAND`` run, and why (or why not), from ``args.emulate``;
    ``missing``: why they cannot run here (default :func:`dcnlab.emu.preflight.problems`). ``--emulate on`` where
    they cannot is a :class:`UserError` naming what is missing: call this before any work."""
    from dcnlab.emu import preflight
    from dcnlab.report.reproduce_all import emulation_plan

    mode = args.emulate
    if mode == "on":
        why = (missing or preflight.problems)()
        if why:
            raise UserError(preflight.message(f"dcnlab reproduce {command} --emulate on", why))
    return emulation_plan(mode, missing)


def only_with_bmv2(args: argparse.Namespace, options: Sequence[str], bmv2: bool, why: str) -> None:
    """Options of the BMv2 parts are errors when they do not run (one line naming the first, and why not)."""
    given = [o for o in options if getattr(args, o.lstrip("-").replace("-", "_"), None) not in (None, False)]
    if given and not bmv2:
        raise UserError(f"{given[0]} applies only when the BMv2 experiment runs (--emulate on, or auto where root "
                        f"and the P4 toolchain are present); here it does not ({why.removeprefix('not run: ')})")
