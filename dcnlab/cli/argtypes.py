"""argparse pieces shared by every ``dcnlab`` command: one-line errors and ranged numbers.

Every bad option ends as one line, ``dcnlab <command>: error: argument --bw: ...``, that names
the option and its valid range, and exit status 2, like every other dcnlab error.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

from dcnlab.topos.errors import UserError
from dcnlab.topos.limits import SizeLimit
from dcnlab.topos.numbers import parse_float, parse_int

SEED_MAX = 2**32 - 1
"""Seeds are 0..2^32-1 everywhere (numpy's legacy seed range; every generator accepts it)."""


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (the usage stays available through --help)."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {one_line(message)} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(2)

    def _get_values(self, action: argparse.Action, arg_strings: list[str]) -> Any:
        # argparse drops a "--" given as an option's only value (``--seconds=--``) and stores [] for an
        # option that takes one value: refuse it like any missing value
        if action.option_strings and arg_strings == ["--"] and action.nargs in (None, argparse.ONE_OR_MORE):
            self.error(f"argument {'/'.join(action.option_strings)}: expected a value, got '--'")
        return super()._get_values(action, arg_strings)


def one_line(text: str) -> str:
    """``text`` on one line: argparse quotes some user text as given (``unrecognized arguments: a<newline>b``)
    and a tool's message may span lines; every dcnlab error is one line. Any control character left (an
    ANSI escape, a NUL from a user's file) is printed escaped (:func:`dcnlab.topos.inputs.escape`), never raw."""
    from dcnlab.topos.inputs import escape

    return escape(" | ".join(line.strip() for line in str(text).splitlines() if line.strip()) or str(text).strip())


@dataclass(frozen=True)
class Ranged:
    """An argparse ``type=`` that accepts a ``kind`` (int or float) in ``lo..hi`` (see :func:`ranged`).

    Its bounds stay readable (``lo``, ``hi``), so tests can generate values inside and outside them."""

    kind: type
    lo: float
    hi: float
    unit: str = ""

    @property
    def __name__(self) -> str:   # argparse names the type in some messages
        return self.kind.__name__

    def valid(self) -> str:
        return f"{self.lo:g}..{self.hi:g}" + (f" {self.unit}" if self.unit else "")

    def __call__(self, text: str) -> float:
        what = "an integer" if self.kind is int else "a number"
        try:
            value = parse_int(text) if self.kind is int else parse_float(text)
        except (TypeError, ValueError):
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}; valid: {self.valid()}") from None
        if isinstance(value, float) and not math.isfinite(value) or not self.lo <= value <= self.hi:
            raise argparse.ArgumentTypeError(f"{text} is out of range; valid: {self.valid()}")
        return value


def ranged(kind: type, lo: float, hi: float, unit: str = "") -> Ranged:
    """An argparse ``type=`` that accepts a ``kind`` (int or float) in ``lo..hi``.

    Only ASCII digits count (:mod:`dcnlab.topos.numbers`): ``٤``, ``4_0``, `` 4``, ``+4``, ``0x10``, ``nan``
    and ``inf`` are refused, with the valid range in the message."""
    return Ranged(kind, lo, hi, unit)


def number(kind: type = float) -> Callable[[str], float]:
    """An argparse ``type=`` for a finite ``kind`` of ASCII digits whose range a later check names
    (in the words of the layer that owns it); :func:`ranged` is the usual choice."""
    what = "an integer" if kind is int else "a number"
    parse = parse_int if kind is int else parse_float

    def convert(text: str) -> float:
        try:
            return parse(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what} (ASCII digits, e.g. 0.5)") from None

    convert.__name__ = kind.__name__
    return convert


def seed() -> Ranged:
    """The ``type=`` of every ``--seed``: an integer in 0..:data:`SEED_MAX`."""
    return ranged(int, 0, SEED_MAX)


def workers() -> Ranged:
    """The ``type=`` of every ``--workers``: 1..256 processes."""
    return ranged(int, 1, 256)


def exclusive(args: argparse.Namespace, option: str, *others: str, why: str = "") -> None:
    """Raise :class:`UserError` when ``option`` was given together with any of ``others``.

    Options are named as on the command line (``--receivers``); an option counts as given when its
    value is not None and not False (so their defaults must be None or False)."""
    if not given(args, option):
        return
    for other in others:
        if given(args, other):
            raise UserError(f"{option} and {other} do not go together" + (f": {why}" if why else ""))


def given(args: argparse.Namespace, option: str) -> bool:
    """Whether ``option`` (``--time-limit``) was given: its value is neither None nor False."""
    value = getattr(args, option.lstrip("-").replace("-", "_"))
    return value is not None and value is not False


def needs(args: argparse.Namespace, option: str, condition: bool, requirement: str) -> None:
    """Raise :class:`UserError` when ``option`` was given but ``condition`` (what it needs) is false:
    ``--seconds applies only with --model``."""
    if given(args, option) and not condition:
        raise UserError(f"{option} applies only {requirement}")


def fabric_spec(limit: Callable[[], SizeLimit] | None = None) -> Callable[[str], str]:
    """An argparse ``type=`` for a fabric spec: parsed (and bounded by ``limit()``, built lazily so
    that the parser stays cheap) at the command line; the spec text is kept."""

    def convert(text: str) -> str:
        from dcnlab.topos.spec import parse_spec

        try:
            parse_spec(text, limit() if limit is not None else None)
        except UserError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
        return text

    convert.__name__ = "fabric spec"
    return convert


def emulation_limit(max_switches: int | None = None) -> SizeLimit:
    """What one emulation brings up at most: ``max_switches`` BMv2 switches (default: ``NetOptions``'s)
    and :data:`dcnlab.emu.options.MAX_EMULATED_HOSTS` hosts (the bounds ``FabricNetwork`` enforces)."""
    from dcnlab.emu.options import MAX_EMULATED_HOSTS, NetOptions

    return SizeLimit("one emulation brings up", switches=max_switches or NetOptions().max_switches,
                     hosts=MAX_EMULATED_HOSTS)


def algorithm_option(p: argparse.ArgumentParser, mechanism: str, *aliases: str, extra: tuple[str, ...] = (),
                     append: bool = False, **kw: Any) -> argparse.Action:
    """``--algo NAME`` of one mechanism's registry (:mod:`dcnlab.controller.registry`): a built-in, an installed
    plug-in (entry point group ``dcnlab.<mechanism>``), ``package.module:name`` or ``file.py:name``, or
    ``list`` to print what is installed, with where each comes from, and exit (as ``--help`` does, before the
    other options are checked). ``aliases``: other spellings of ``--algo`` (congestion's ``--policy``), which
    parse the same, ``list`` included. ``extra``: names the command takes beside the registry's (e.g. shuffle's
    ``srs``); ``append``: the option repeats, its names collected in a list. An unknown name or a plug-in that
    fails to load is one line, before any work."""
    return p.add_argument("--algo", *aliases, action=_AlgoAction, mechanism=mechanism, extra=extra, append=append,
                          **kw)


class _AlgoAction(argparse.Action):
    def __init__(self, option_strings: list[str], dest: str, mechanism: str, extra: tuple[str, ...] = (),
                 append: bool = False, **kw: Any) -> None:
        self.mechanism, self.extra, self.append = mechanism, extra, append
        super().__init__(option_strings, dest, **kw)

    def _registry(self) -> Any:
        import importlib
        return importlib.import_module(f"dcnlab.controller.{self.mechanism}.registry").REGISTRY

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        registry = self._registry()
        if values == "list":       # the same listing under any alias (--policy list is --algo list)
            print(registry.format_listing(self.option_strings[0]))
            parser.exit(0)
        if values not in self.extra:
            try:
                registry.get(values, option_string or self.dest)
            except UserError as e:
                parser.error(f"argument {option_string}: {str(e).split(': ', 1)[-1]}")
        if self.append:
            setattr(namespace, self.dest, [*(getattr(namespace, self.dest, None) or []), values])
        else:
            setattr(namespace, self.dest, values)
