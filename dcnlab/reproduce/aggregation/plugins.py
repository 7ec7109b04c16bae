"""A user's tree builder in the model sweeps of ``dcnlab reproduce aggregation --algo A``.

The incast parts of the sweep (``000-k``, ``000-size``: 000's traffic, links, aggregators, new servers,
busiest link and receiver input against k and the number of senders; ``gap``: cost against the exact
optimum on small BCubes) run every ``--algo`` builder on the same draws as the papers' schemes, with the
same seed as the unicast paths. Its tree is validated first, by the checks ``dcnlab plan aggregation --algo``
applies (:func:`dcnlab.controller.aggregation.plugin_tree`: known servers, one hop per edge, no cycle,
every sender reaching the receiver), then turned into a one-tree :class:`~dcnlab.controller.aggregation.forest.Forest`
and scored by the very functions the built-ins' forests are scored by
(:func:`dcnlab.reproduce.aggregation.model.score_forest`).

The shuffle parts ``003-k`` (60x60 shuffles on BCube(6,k)) and ``003-size`` (m = n on BCube(8,5)) run it as
``plan aggregation --shuffle --algo A`` does: one incast tree from every sender to each receiver, each
validated as above, all with the round's seed (:func:`shuffle_forest`); the forest of these trees is measured
by :func:`dcnlab.controller.aggregation.shuffle.shuffle_costs` beside SRS, incast-, unicast- and Steiner-based
(traffic, and in 003-k links, aggregators and receiver input, by the functions the built-ins' forests are
measured by). Its rows: saving against no aggregation and traffic below SRS, averaged as the built-ins'
savings. ``003-delta`` (SRS and unicast-based against the aggregation ratio) does not run plug-ins: it would
add 21 ratios x up to 1,000 user trees per round for a curve the papers draw for SRS only.
A user's builder is plain Python: a shuffle is m trees of m senders each, so the largest points dominate
(the example Takahashi-Matsuyama takes about 0.1 s a tree, validation included, at m = n = 500 on BCube(8,5)).

Workers get the plug-in by reference, never as an object: a name (entry point) or ``module:name`` as given,
a ``file.py:name`` with its path made absolute, so that a pool or Dask worker with another working directory
loads the same file (:func:`worker_refs`). Results are keyed by the name as the user wrote it.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

PARTS = ("003-k", "003-size", "000-k", "000-size", "gap")
"""The parts of :mod:`dcnlab.reproduce.aggregation.model` where a plug-in runs beside the papers' schemes."""


def worker_refs(names: Sequence[str], parts: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """``(name as written, reference a worker resolves)`` of every ``--algo``, checked before any work: a
    built-in (the sweeps run theirs already), a builder that does not apply to BCube, or parts without an
    incast (``--only``) is one :class:`~dcnlab.topos.errors.UserError`."""
    from dcnlab.controller.aggregation import registry
    from dcnlab.controller.registry import portable
    from dcnlab.topos.errors import UserError

    out = []
    for name in dict.fromkeys(names):
        a = registry.get(name)
        if a.builtin:
            raise UserError(f"--algo {name}: a built-in; the model sweeps run the papers' schemes already (valid: "
                            "an installed plug-in, package.module:name or file.py:name)")
        if "bcube" not in registry.fabrics_of(a):
            raise UserError(f"--algo {name}: builds trees for {', '.join(registry.fabrics_of(a)) or 'no fabric'} "
                            "only; the model sweeps run BCubes (fat-tree builders run with --emulate)")
        out.append((name, portable(name)))
    if out and not set(parts) & set(PARTS):
        raise UserError(f"--algo: a tree builder runs in the parts {', '.join(PARTS)}; --only "
                        f"{' '.join(parts)} has none of them")
    return tuple(out)


def forest_of(space: Any, receiver: int, senders: Sequence[int], parent: dict[str, str]) -> Any:
    """The :class:`~dcnlab.controller.aggregation.forest.Forest` of one validated tree ``{child: parent}`` of
    server names (``v<i>``) towards ``receiver``, labels relative to it as the built-ins' (each hop's level:
    the digit its servers differ in); checked by :meth:`Forest.validate`."""
    return forest_of_trees(space, [receiver], senders, [parent])


def forest_of_trees(space: Any, receivers: Sequence[int], senders: Sequence[int],
                    parents: Sequence[dict[str, str]]) -> Any:
    """One :class:`~dcnlab.controller.aggregation.forest.Forest` of validated trees, ``parents[b]`` towards
    ``receivers[b]``, all from ``senders`` (a shuffle: one incast tree per receiver, as the engine's forests)."""
    import numpy as np

    from dcnlab.controller.aggregation.forest import ForestBuilder, InvalidTree

    sent = {int(s) for s in senders}
    fb = ForestBuilder(space, np.array([int(r) for r in receivers], dtype=np.int64))
    for b, (receiver, parent) in enumerate(zip(receivers, parents)):
        rel = {int(c[1:]): int(p[1:]) for c, p in parent.items()}
        order = sorted(rel)
        if not order:
            continue
        labels = space.relabel(np.array(order, dtype=np.int64), int(receiver))
        rows = fb.add(labels, np.full(len(order), b, np.int64), np.array([v in sent for v in order], dtype=bool))
        index = {v: int(r) for v, r in zip(order, rows)}
        index[int(receiver)] = b
        parents_b = np.array([rel[v] for v in order], dtype=np.int64)
        if not set(parents_b.tolist()) <= index.keys():
            raise InvalidTree("a hop's parent neither is the receiver nor has a parent itself")
        fb.link(rows, np.array([index[p] for p in parents_b.tolist()], dtype=np.int64),
                space.differing_dim(np.array(order, dtype=np.int64), parents_b))
    forest = fb.finish()
    forest.validate(np.full(len(receivers), len(sent)))
    return forest


def _tree(space: Any, receiver: int, senders: Sequence[int], ref: str, seed: int) -> dict[str, str]:
    """The builder ``ref``'s tree on BCube(n,k) (``space``), validated as ``plan aggregation --algo`` does
    (:func:`~dcnlab.controller.aggregation.plugin_tree`); a builder that fails or returns an invalid tree is
    one :class:`~dcnlab.controller.registry.PluginError` naming it."""
    from dcnlab.controller.aggregation import plugin_tree

    return plugin_tree(_bcube(space.n, space.k), f"v{int(receiver)}", [f"v{int(s)}" for s in senders], ref, seed=seed,
                       checked=True).parent


@functools.lru_cache(maxsize=8)
def _bcube(n: int, k: int) -> Any:
    """BCube(n,k) as a fabric, once per worker (a shuffle asks for it once per receiver)."""
    from dcnlab.topos.spec import parse_spec

    return parse_spec(f"bcube:n={n},k={k}")


def plugin_forest(space: Any, receiver: int, senders: Sequence[int], ref: str, seed: int) -> Any:
    """Run the builder ``ref`` on BCube(n,k) (``space``), validate its tree and return its forest."""
    return forest_of(space, int(receiver), [int(s) for s in senders], _tree(space, receiver, senders, ref, seed))


def shuffle_forest(space: Any, receivers: Sequence[int], senders: Sequence[int], ref: str, seed: int) -> Any:
    """A shuffle by the builder ``ref``, as ``plan aggregation --shuffle --algo`` builds it: one validated incast
    tree from every sender to each receiver (same ``seed`` for all), as one forest in the receivers' order."""
    s = [int(x) for x in senders]
    return forest_of_trees(space, [int(r) for r in receivers], s,
                           [_tree(space, int(r), s, ref, seed) for r in receivers])


def label(name: str) -> str:
    """A plug-in's name for a plot's legend (:func:`dcnlab.controller.registry.short_name`)."""
    from dcnlab.controller.registry import short_name

    return f"plug-in {short_name(name)}"


def describe(names: Sequence[str]) -> list[dict[str, str]]:
    """``{name, origin, summary}`` of each plug-in (for ``aggregation.json`` and ``summary.json``)."""
    from dcnlab.controller.aggregation import registry

    return [{"name": n, "origin": registry.get(n).origin, "summary": registry.get(n).summary} for n in names]


def rows(results: dict[str, Any], names: Sequence[str]) -> list[dict[str, Any]]:
    """Each plug-in's figures per part (the ``overall`` keys that name it), with its origin: ``summary.json``'s
    ``algorithms``."""
    out = []
    for d in describe(names):
        n = d["name"]
        parts = {part: {k: v for k, v in res["overall"].items() if k.startswith(f"{n} ")}
                 for part, res in results.items() if part in PARTS}
        out.append({**d, "parts": {p: v for p, v in parts.items() if v}})
    return out
