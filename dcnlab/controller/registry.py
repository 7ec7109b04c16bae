"""Algorithms as plug-ins: one registry per mechanism, for dcnlab's own algorithms and a user's.

Each mechanism package keeps one :class:`Registry` (``dcnlab.controller.<mechanism>.registry``) with one small
interface, documented there. dcnlab registers its own algorithms in it; a user's algorithm gets in by one of

* a **Python entry point** in the mechanism's group (``dcnlab.aggregation``, ``dcnlab.multicast``,
  ``dcnlab.congestion``, ``dcnlab.cist``), declared by an installed package, as pytest plug-ins and
  networkx backends are::

      [project.entry-points."dcnlab.multicast"]
      spt = "dcnlab_plugins.multicast:ShortestPathTrees"

* a **reference** given where a name is asked for (``--algo``): ``package.module:name``, or
  ``path/to/file.py:name`` for a file that is not installed (Mininet's ``mn --custom`` does the same).

A name is looked up among the built-ins first, then the entry points: an installed plug-in cannot change
what a built-in name means (:meth:`Registry.listing` shows such a plug-in as hidden). A reference is used
as written, so a table row or a plot series says exactly what ran, and another process (a pool worker, a Dask
worker) finds the same algorithm again by that name.

Everything that goes wrong while finding or loading an algorithm is a
:class:`~dcnlab.topos.errors.UserError` of one line naming the algorithm and what is valid. A user's code,
when imported and when called, runs inside :func:`plugin_code`: whatever ends it (an exception, ``sys.exit()``,
anything but Ctrl-C) is one :class:`PluginError` naming it; :func:`at_most` reads its results no further than
they can be right.
"""

from __future__ import annotations

import importlib
import importlib.util
import itertools
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from dcnlab.topos.errors import UserError
from dcnlab.topos.inputs import file_problem, quote

MECHANISMS = ("aggregation", "multicast", "congestion", "cist")


class PluginError(UserError):
    """A user's algorithm cannot be found, does not load, or returned something invalid."""


MAX_MESSAGE = 300
"""Characters of a plug-in's own message kept in a :class:`PluginError` (the line stays a line)."""


def _what_ended(e: BaseException) -> str:
    """How a plug-in's code ended, in one line: ``TypeError: message``, ``it called sys.exit(3)``."""
    if isinstance(e, SystemExit):
        return "it called sys.exit()" if e.code is None else f"it called sys.exit({e.code!r:.{MAX_MESSAGE}})"
    try:
        text = " ".join(str(e).split("\n"))
    except KeyboardInterrupt:
        raise
    except BaseException:                   # its __str__ is the user's code too: no message then
        text = ""
    if len(text) > MAX_MESSAGE:
        text = text[:MAX_MESSAGE] + "..."
    if isinstance(e, UserError):
        return text
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


@contextmanager
def plugin_code(what: str, builtin: bool = False) -> Iterator[None]:
    """Run a user's code (importing it, calling it, reading or checking what it returned) in a ``with`` block:
    whatever ends the block (an exception, ``SystemExit`` from ``sys.exit()``, any ``BaseException`` but
    ``KeyboardInterrupt``) is one :class:`PluginError` ``"{what}: {how it ended}"``, ``what`` naming the
    plug-in. A :class:`PluginError` (dcnlab's own check inside the block) passes as it is; with ``builtin`` (the
    code is dcnlab's own) every exception does, a bug of dcnlab's keeping its traceback."""
    try:
        yield
    except (KeyboardInterrupt, PluginError):
        raise
    except BaseException as e:
        if builtin:
            raise
        raise PluginError(f"{what}: {_what_ended(e)}") from None


def a_type(obj: Any) -> str:
    """``a str``, ``an int``: the type of ``obj`` with its article, for a message."""
    name = type(obj).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def at_most(items: Any, limit: int, what: str, valid: str) -> list[Any]:
    """The first items of a plug-in's result ``items`` (any iterable, an endless generator too) as a list,
    or one :class:`PluginError` when it is not iterable or has more than ``limit`` items: what cannot be right
    is refused before it is read whole or checked (call it inside :func:`plugin_code`). ``what`` names the
    plug-in and the result (``"multicast algorithm A: trees()"``), ``valid`` says what is valid:
    ``"{what} has more than {limit} items; valid: {valid}"``."""
    try:
        it = iter(items)
    except TypeError:
        raise PluginError(f"{what} is {a_type(items)}; valid: {valid}") from None
    out = list(itertools.islice(it, limit + 1))
    if len(out) > limit:
        raise PluginError(f"{what} has more than {limit:,} item{'' if limit == 1 else 's'}; valid: {valid}")
    return out


@dataclass(frozen=True)
class Algorithm:
    """One registered algorithm of a mechanism."""

    name: str
    """The name tables, plots and ``summary.json`` use (a reference's own text for a reference)."""
    obj: Any
    """What the mechanism's interface asks for (a function or a class); see the mechanism's registry."""
    origin: str
    """Where it comes from: ``built-in``, ``entry point (distribution version)`` or ``reference``."""
    summary: str
    """First line of its docstring."""
    builtin: bool = False
    options: tuple[tuple[str, Any], ...] = ()
    """Fixed keyword options a built-in entry passes to ``obj`` (e.g. ``scope="group"``)."""


def _summary(obj: Any, fallback: str = "") -> str:
    doc = (getattr(obj, "__doc__", None) or "").strip()
    return doc.splitlines()[0].strip() if doc else fallback


def is_reference(text: str) -> bool:
    """``package.module:name`` or ``file.py:name`` (a registered name never holds a colon)."""
    return ":" in text


def portable(name: str) -> str:
    """``name`` as another process finds the same algorithm by it (a pool or Dask worker with another working
    directory): a ``file.py:name`` reference with its path made absolute, anything else as it is."""
    target, colon, attr = name.rpartition(":")
    if colon and (target.endswith(".py") or "/" in target):
        return f"{Path(target).resolve()}:{attr}"
    return name


def short_name(name: str) -> str:
    """``name`` for a plot's legend or a table's row: a reference as ``attr() of file.py`` (its folders left
    out) or ``attr() of package.module``, a registered name as it is."""
    target, colon, attr = name.rpartition(":")
    if not colon:
        return name
    return f"{attr}() of {Path(target).name if target.endswith('.py') or '/' in target else target}"


def _load_file(path_text: str, what: str) -> Any:
    why = file_problem(path_text)
    if why is not None:
        raise PluginError(f"{what}: file {quote(path_text)}: {why}")
    path = Path(path_text).resolve()
    if path.suffix != ".py":
        raise PluginError(f"{what}: {quote(path_text)} is not a Python file; valid: path/to/file.py:name")
    mod_name = "dcnlab_plugin_" + "".join(c if c.isalnum() else "_" for c in str(path))
    if mod_name in sys.modules:
        return sys.modules[mod_name]
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None:
        raise PluginError(f"{what}: cannot load {quote(path_text)} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    try:
        with plugin_code(f"{what}: {quote(path_text)} failed to load"):
            spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(mod_name, None)
        raise
    return module


def load_reference(text: str, what: str) -> Any:
    """The object a ``package.module:name`` or ``file.py:name`` reference names (``what`` names the
    option or file the reference came from, for the error)."""
    target, _, attr = text.rpartition(":")
    if not target or not attr or not all(p.isidentifier() for p in attr.split(".")):
        raise PluginError(f"{what}: {quote(text)} is not a reference; valid: package.module:name or "
                          "path/to/file.py:name")
    if target.endswith(".py") or "/" in target:
        module = _load_file(target, what)
    else:
        if not all(p.isidentifier() for p in target.split(".")):
            raise PluginError(f"{what}: {quote(target)} is not a module name; valid: package.module:name")
        with plugin_code(f"{what}: importing {quote(target)} failed"):
            try:
                module = importlib.import_module(target)
            except ImportError as e:
                raise PluginError(f"{what}: cannot import {quote(target)} ({_what_ended(e)}); is the "
                                  "package installed in this environment?") from None
    obj: Any = module
    with plugin_code(f"{what}: {quote(text)}"):      # a module's __getattr__ is the user's code too
        for part in attr.split("."):
            try:
                obj = getattr(obj, part)
            except AttributeError:
                raise PluginError(f"{what}: {quote(target)} has no {quote(attr)}") from None
    return obj


@lru_cache(maxsize=None)
def _entry_points(group: str) -> tuple[metadata.EntryPoint, ...]:
    return tuple(sorted(metadata.entry_points(group=group), key=lambda e: e.name))


def _dist(ep: metadata.EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return f"{dist.name} {dist.version}" if dist is not None else "unknown distribution"


class Registry:
    """The algorithms of one mechanism: dcnlab's own, the installed plug-ins' and references.

    ``check(obj)`` returns a problem (a short phrase) when ``obj`` cannot be an algorithm of this
    mechanism (e.g. "not callable"), or ``None``."""

    def __init__(self, mechanism: str, interface: str, check: Callable[[Any], str | None] | None = None) -> None:
        if mechanism not in MECHANISMS:
            raise ValueError(f"unknown mechanism {mechanism!r}")
        self.mechanism = mechanism
        self.group = f"dcnlab.{mechanism}"
        self.interface = interface
        self._check = check
        self._builtins: dict[str, Algorithm] = {}
        self._a = ("an " if mechanism[0] in "aeiou" else "a ") + mechanism

    # -- dcnlab's own -------------------------------------------------------------------------------
    def add(self, name: str, obj: Any, summary: str | None = None, **options: Any) -> Algorithm:
        """Register a built-in (``options`` are passed to ``obj`` with every call)."""
        if name in self._builtins or is_reference(name):
            raise ValueError(f"{self.mechanism}: built-in name {name!r} taken or invalid")
        algo = Algorithm(name, obj, "built-in", summary or _summary(obj), True, tuple(options.items()))
        self._builtins[name] = algo
        return algo

    def builtins(self) -> tuple[str, ...]:
        return tuple(self._builtins)

    # -- the installed plug-ins -------------------------------------------------------------------------
    def plugins(self) -> tuple[str, ...]:
        """Names of the installed plug-ins that a name can reach (not hidden by a built-in)."""
        return tuple(e.name for e in _entry_points(self.group) if e.name not in self._builtins)

    def names(self) -> tuple[str, ...]:
        return self.builtins() + self.plugins()

    def _from_entry_point(self, ep: metadata.EntryPoint, what: str) -> Algorithm:
        with plugin_code(f"{what}: the plug-in {quote(ep.name)} ({ep.value}, from {_dist(ep)}) failed to load"):
            obj = ep.load()
            return self._checked(Algorithm(ep.name, obj, f"entry point {self.group} ({_dist(ep)}: {ep.value})",
                                           _summary(obj)), what)

    def _checked(self, algo: Algorithm, what: str) -> Algorithm:
        problem = self._check(algo.obj) if self._check is not None else None
        if problem:
            raise PluginError(f"{what}: {quote(algo.name)} cannot be {self._a} algorithm: {problem} "
                              f"(the interface: {self.interface})")
        return algo

    # -- lookup ------------------------------------------------------------------------------------------
    def get(self, name: str, what: str = "--algo") -> Algorithm:
        """The algorithm called ``name`` (a built-in, an installed plug-in, or a reference)."""
        if name in self._builtins:
            return self._builtins[name]
        if is_reference(name):
            obj = load_reference(name, what)
            with plugin_code(f"{what}: {quote(name)}"):           # its __doc__ may be the user's code
                return self._checked(Algorithm(name, obj, "reference", _summary(obj)), what)
        for ep in _entry_points(self.group):
            if ep.name == name:
                return self._from_entry_point(ep, what)
        raise PluginError(f"{what}: {quote(name)} is not {self._a} algorithm; valid: "
                          f"{', '.join(self.names())}, package.module:name, file.py:name or list")

    def listing(self) -> list[tuple[str, str, str]]:
        """``(name, origin, summary)`` of every algorithm installed, built-ins first; a plug-in that fails to
        load is listed with its error instead of failing the listing."""
        rows = [(a.name, a.origin, a.summary) for a in self._builtins.values()]
        for ep in _entry_points(self.group):
            origin = f"entry point {self.group} ({_dist(ep)}: {ep.value})"
            if ep.name in self._builtins:
                rows.append((ep.name, origin, "hidden: a built-in has this name"))
                continue
            try:
                algo = self._from_entry_point(ep, "plug-in")
            except PluginError as e:
                rows.append((ep.name, origin, f"BROKEN: {e}"))
            else:
                rows.append((algo.name, algo.origin, algo.summary))
        return rows

    def format_listing(self, option: str = "--algo") -> str:
        """The listing as ``OPTION list`` prints it (``option``: the command's, ``--algo`` or ``--policy``)."""
        rows = self.listing()
        width = max(len(r[0]) for r in rows)
        lines = [f"{self.mechanism} algorithms (built-ins, then the entry point group {self.group}; "
                 f"or {option} package.module:name / file.py:name):"]
        for name, origin, summary in rows:
            lines.append(f"  {name:<{width}}  {summary}")
            if origin != "built-in":
                lines.append(f"  {'':<{width}}  from: {origin}")
        lines.append(f"interface: {self.interface}")
        return "\n".join(lines)

def callable_check(obj: Any) -> str | None:
    return None if callable(obj) else f"a {type(obj).__name__}, not callable"

