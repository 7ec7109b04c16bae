"""The reproductions, by name: dcnlab's own four, then the installed plug-ins of the entry point group
``dcnlab.reproductions`` (:data:`~dcnlab.reproduce.protocol.GROUP`), found the way algorithms are
(:class:`dcnlab.controller.registry.Registry`: a built-in name cannot be taken by a plug-in). A user's package
declares its reproduction in its ``pyproject.toml``::

    [project.entry-points."dcnlab.reproductions"]
    fattree-counts = "dcnlab_example_plugins.paper:REPRODUCTION"

and ``dcnlab reproduce all`` runs it beside dcnlab's, ``dcnlab reproduce fattree-counts`` alone.

May import: :mod:`dcnlab.reproduce.protocol`, each mechanism's ``reproduction`` module (the only place that
names them), and the controller's registry.
"""

from __future__ import annotations

from functools import lru_cache

from dcnlab.controller.registry import PluginError, Registry, _entry_points
from dcnlab.reproduce.protocol import GROUP, Reproduction, problem
from dcnlab.topos.inputs import quote

INTERFACE = ("an instance of a subclass of dcnlab.reproduce.protocol.Reproduction (name, title, papers, run_task, "
             "tasks, finish, headlines)")


class Reproductions(Registry):
    """:class:`~dcnlab.controller.registry.Registry` of reproductions instead of a mechanism's algorithms."""

    def __init__(self) -> None:
        super().__init__("aggregation", INTERFACE, problem)      # then aimed at the reproductions' group
        self.mechanism, self.group, self._a = "reproduction", GROUP, "a reproduction"

    def _checked(self, algo, what):  # type: ignore[no-untyped-def]
        found = problem(algo.obj)
        if found:
            raise PluginError(f"{what}: {quote(algo.name)} cannot be a reproduction: {found} "
                              f"(the interface: {self.interface})")
        if algo.obj.name != algo.name:
            raise PluginError(f"{what}: the plug-in {quote(algo.name)} is a reproduction named "
                              f"{quote(algo.obj.name)}; valid: the entry point's name and the reproduction's agree")
        return algo


@lru_cache(maxsize=1)
def registry() -> Reproductions:
    """The registry, dcnlab's own reproductions added (in the report's order)."""
    from dcnlab.reproduce.aggregation.reproduction import REPRODUCTION as aggregation
    from dcnlab.reproduce.cist.reproduction import REPRODUCTION as cist
    from dcnlab.reproduce.congestion.reproduction import REPRODUCTION as congestion
    from dcnlab.reproduce.multicast.reproduction import REPRODUCTION as multicast

    reg = Reproductions()
    for rep in (aggregation, multicast, congestion, cist):
        reg.add(rep.name, rep, rep.title)
    return reg


def builtins() -> tuple[str, ...]:
    return registry().builtins()


RESERVED = ("all", "search")
"""Names of ``dcnlab reproduce`` commands that no plug-in can take (as a built-in's cannot)."""


def plugins() -> tuple[str, ...]:
    """The installed plug-ins' names (not loaded: a broken one fails when it is asked for); one that has a
    built-in's name or a reserved one (:data:`RESERVED`) is hidden."""
    return tuple(dict.fromkeys(ep.name for ep in _entry_points(GROUP)
                               if ep.name not in builtins() and ep.name not in RESERVED))


def names() -> tuple[str, ...]:
    """Every reproduction ``reproduce all`` runs: dcnlab's, then the plug-ins', by name."""
    return builtins() + plugins()


def get(name: str, what: str = "reproduce") -> Reproduction:
    """The reproduction called ``name``; one :class:`~dcnlab.controller.registry.PluginError` line otherwise."""
    if name in RESERVED:
        raise PluginError(f"{what}: {quote(name)} is not a reproduction; valid: {', '.join(names())}")
    rep = registry().get(name, what).obj
    assert isinstance(rep, Reproduction)
    return rep


def every(what: str = "reproduce all") -> list[Reproduction]:
    """Every reproduction (:func:`names`), loaded: a plug-in that does not load is one error line."""
    return [get(n, what) for n in names()]


def warm_every() -> None:
    """Every reproduction's :attr:`~dcnlab.reproduce.protocol.Reproduction.warm_up`, in a worker before its first
    task (a module-level function, as a Dask worker's warm-up must be)."""
    for rep in every():
        if rep.warm_up is not None:
            rep.warm_up()
