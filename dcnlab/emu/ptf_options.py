"""Which PTF option each word after ``--`` sets, as PTF's own parser reads it.

PTF parses its command line with ``argparse``, which accepts any unique prefix of a long option
(``--test-d X`` is ``--test-dir X``) and a short option's value attached (``-i0@veth0``) or joined by
``=``, and several short flags in one word (``-qi0@veth0``). dcnlab sets some options itself (the ports,
the test directory, the platform, the test parameters: :data:`OWN`), so a word that reaches one of them in
any of those spellings must be refused before any work, and a list of spellings would always miss one.

So the words are parsed by PTF's own option table: the ``ptf`` script's imports, tables and functions up
to ``config_setup()`` are run (not what follows, which runs the tests), then ``config_setup()`` with
argparse's ``parse_args`` replaced by one that hands back the parser it was called on (nothing is parsed,
no test directory checked); a parser with the very same option strings, numbers of values, prefix
characters and abbreviation rule, whose actions only record which option they are, then parses the words
with the argparse of the Python PTF runs with (dcnlab's). What it records is what PTF would set; what it
cannot parse (an ambiguous prefix, a missing value, an unknown option) PTF would refuse too, and is
refused here with argparse's own words. Where PTF's table cannot be read (a PTF whose script is made
differently), a table of :data:`OWN` and the options dcnlab reads (:data:`READ`) stands in, and only
what it resolves to one of :data:`OWN` is refused.
"""

from __future__ import annotations

import argparse
import ast
import functools
import logging
import os
import types
from collections.abc import Sequence
from pathlib import Path

log = logging.getLogger(__name__)

OWN = ("--interface", "--test-dir", "--device-socket", "--platform", "--platform-dir", "--platform-args",
       "--test-params")
"""PTF options dcnlab sets itself (the test parameters are merged: dcnlab's ``--test-params`` option)."""
READ = ("--log-file", "--log-dir", "--test-case-timeout")
"""PTF options dcnlab sets unless the user gives them (:func:`dcnlab.emu.ptf.ptf_argv`)."""
_SHORT = {"--interface": "-i", "--platform": "-P", "--platform-args": "-a", "--test-params": "-t"}


class PtfOptionError(ValueError):
    """The words cannot be PTF's options: one line saying why (argparse's message, or the option dcnlab sets:
    then ``own`` is that option's long name)."""

    def __init__(self, message: str, own: str | None = None) -> None:
        super().__init__(message)
        self.own = own


class _Got(Exception):
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        super().__init__("PTF's parser")
        self.parser = parser


class _Hit(Exception):
    def __init__(self, option: str, names: tuple[str, ...]) -> None:
        super().__init__(option)
        self.option, self.names = option, names


class _Mirror(argparse.ArgumentParser):
    def error(self, message: str):  # type: ignore[override]
        raise PtfOptionError(message)


class _Record(argparse.Action):
    """Records the option (all its spellings) on the namespace; stops at the first one dcnlab sets."""

    def __call__(self, parser, namespace, values, option_string=None):
        names = tuple(self.option_strings)
        if set(names) & set(OWN):
            raise _Hit(option_string or names[0], names)
        if names:
            namespace._given.update(names)


@functools.lru_cache(maxsize=4)
def _ptf_parser(script: str) -> argparse.ArgumentParser | None:
    """The parser PTF's ``config_setup()`` builds in ``script`` (the ``ptf`` script); None if it cannot be had."""
    class Capture(argparse.ArgumentParser):
        def parse_args(self, *a, **k):  # type: ignore[override]
            raise _Got(self)

    shim = types.ModuleType("argparse")
    shim.__dict__.update(vars(argparse))
    shim.ArgumentParser = Capture  # type: ignore[attr-defined]
    try:
        body: list[ast.stmt] = []
        for node in ast.parse(Path(script).read_text(), script).body:   # its imports, tables and functions
            if isinstance(node, (ast.Import, ast.ImportFrom, ast.Assign, ast.FunctionDef, ast.ClassDef)):
                body.append(node)
            if isinstance(node, ast.FunctionDef) and node.name == "config_setup":
                break                            # what follows runs the tests
        ns: dict = {"__name__": "dcnlab_ptf_options", "__file__": script}
        exec(compile(ast.Module(body=body, type_ignores=[]), script, "exec"), ns)
        ns["argparse"] = shim
        ns["config_setup"]()
    except _Got as got:
        return got.parser
    except Exception as e:                       # a PTF made otherwise: the stand-in table
        log.debug("PTF's options could not be read from %s: %s", script, e)
    return None


def _stand_in() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    for name in (*OWN, *READ):
        p.add_argument(*([_SHORT[name]] if name in _SHORT else []), name)
    return p


def _mirror(real: argparse.ArgumentParser) -> _Mirror:
    m = _Mirror(prog="ptf", add_help=False, prefix_chars=real.prefix_chars, allow_abbrev=real.allow_abbrev)
    for i, a in enumerate(real._actions):
        nargs = a.nargs
        if set(a.option_strings) & set(OWN) and nargs is None:
            nargs = "?"                          # refused as given, with or without its value
        if a.option_strings:
            m.add_argument(*a.option_strings, dest=f"_{i}", nargs=nargs, action=_Record, default=None)
        else:
            m.add_argument(f"_{i}", nargs=nargs, action=_Record, default=None)
    return m


def given(words: Sequence[str], script: str | os.PathLike | None) -> set[str]:
    """Every spelling of every PTF option ``words`` set (``{"--log-file"}`` for ``--log-f X``), as the PTF of
    ``script`` (its ``ptf`` script; None: not installed) reads them.

    Raises :class:`PtfOptionError` for a word that reaches an option dcnlab sets (:data:`OWN`), however
    spelled, and, when PTF's own table was read, for words PTF's parser would refuse."""
    real = _ptf_parser(os.fspath(script)) if script is not None else None
    mirror = _mirror(real if real is not None else _stand_in())
    ns = argparse.Namespace(_given=set())
    try:
        if real is not None:
            mirror.parse_args(list(words), ns)
        else:
            try:
                mirror.parse_known_args(list(words), ns)
            except PtfOptionError:               # the stand-in's table is not PTF's: only its hits count
                pass
    except _Hit as hit:
        long = next((n for n in hit.names if n.startswith("--")), hit.option)
        word = next((w for w in words if w.split("=", 1)[0] == hit.option or _spells(w, hit.names)), long)
        as_ptf = "" if word.split("=", 1)[0] == long else f" (PTF reads {word[:100]!r} as {long})"
        raise PtfOptionError(f"PTF option {long}{as_ptf} is set by dcnlab", long) from None
    return set(ns._given)


def _spells(word: str, names: tuple[str, ...]) -> bool:
    """Whether ``word`` could be one of ``names`` abbreviated (``--test-d``) or with its value attached
    (``-i0@veth0``, ``--test-dir=x``); for naming the word in a message only."""
    head = word.split("=", 1)[0]
    return any((n.startswith("--") and head.startswith("--") and len(head) > 2 and n.startswith(head))
               or (not n.startswith("--") and word.startswith(n)) for n in names)
