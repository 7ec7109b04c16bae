"""The live view: a web page of the fabric, its link loads and the mechanisms' trees, drawn from a plan or
a running fabric.

Layering: this package sits on top of :mod:`dcnlab.topos`, :mod:`dcnlab.emu` and
:mod:`dcnlab.controller` and below the CLI (:mod:`dcnlab.cli`) and :mod:`dcnlab.api`, which
call into it; it imports nothing from those two. Its modules:

* :mod:`~dcnlab.view.layout`, :mod:`~dcnlab.view.blocks`, :mod:`~dcnlab.view.rows`: positions per family, blocks
  for big fabrics, the rows and groups both share;
* :mod:`~dcnlab.view.dragonfly`, :mod:`~dcnlab.view.labels`: a Dragonfly drawn as framed groups on a circle;
  label boxes and whether any two overlap;
* :mod:`~dcnlab.view.rates`: per-link rates from two samples of the interfaces' counters;
* :mod:`~dcnlab.view.trees`: the planners' results as link sets;
* :mod:`~dcnlab.view.flows`: tenants' flows with their rates under congestion control;
* :mod:`~dcnlab.view.drops`: lost packets where the program counts them;
* :mod:`~dcnlab.view.opening`: a block of a big fabric opened into its members;
* :mod:`~dcnlab.view.sources`: a plan (model backend) or a running fabric, as JSON-ready objects;
* :mod:`~dcnlab.view.attach`: a run another process keeps up (``dcnlab view RUN_DIR``);
* :mod:`~dcnlab.view.server`: the HTTP server (127.0.0.1 only, a token in the URL, read-only);
* ``static/``: the page (HTML, one small script drawing SVG, CSS), shipped in the package.

Entry points: :func:`start` (any source), :func:`for_network` (a running
:class:`~dcnlab.emu.network.FabricNetwork`), :func:`plan_source` (a planner's result),
:func:`add_view_option` and :func:`wrap_plan` (the CLI's ``--view``).
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dcnlab.view.server import ViewServer
    from dcnlab.view.sources import PlanSource, Source

__all__ = ["add_view_option", "for_network", "plan_source", "start", "view_dir_port", "view_port", "wait", "wrap_plan"]
# the server, sources and layouts are imported on first use: the CLI's parser imports this package


def start(source: Source, port: int | None = None, say: Callable[[str], None] | None = None) -> ViewServer:
    """Serve ``source`` on 127.0.0.1 (``port`` or a free one); the URL with its token is said once."""
    from dcnlab.view.server import ViewServer
    server = ViewServer(source, port or 0).start()
    (say or (lambda m: print(m, file=sys.stderr, flush=True)))(f"view: {server.url}")
    return server


def for_network(emu: Any, port: int | None = None, say: Callable[[str], None] | None = None,
                trees: Any = ()) -> ViewServer:
    """The view of a running :class:`~dcnlab.emu.network.FabricNetwork` (counters from its namespace,
    switches read back through its controller)."""
    from dcnlab.view.drops import controller_drops
    from dcnlab.view.sources import LiveSource, controller_reader
    reader = controller_reader(emu.controller) if emu.controller is not None else None
    drops = controller_drops(emu.controller, [n.name for n in emu.fabric.forwarding_nodes()]) \
        if emu.controller is not None else None
    return start(LiveSource(emu.fabric, emu.netns, reader, trees, drops=drops), port, say)


def plan_source(planned: tuple[Any, ...]) -> PlanSource:
    """A :class:`PlanSource` from what a ``plan`` command left in ``args.planned``:
    ``("multicast", hierarchy, PlanResult)``, ``("aggregation", fabric, tree or shuffle plan)`` or
    ``("cist", fabric, CistPlan, Failures or None)`` or ``("congestion", fabric, plan data)`` (the tenants'
    flows laid onto the fabric by :func:`dcnlab.view.flows.plan_flows`)."""
    from dcnlab.view import trees as t
    from dcnlab.view.sources import PlanSource
    kind = planned[0]
    if kind == "multicast":
        h, result = planned[1], planned[2]
        return PlanSource(h.fabric, t.multicast_trees(h, result))
    if kind == "aggregation":
        return PlanSource(planned[1], t.aggregation_trees(planned[2]))
    if kind == "cist":
        fabric, plan, failed = planned[1], planned[2], planned[3] if len(planned) > 3 else None
        cut = set(failed.links) if failed is not None else set()
        if failed is not None:
            cut |= {(l.a, l.b) for l in fabric.links() if l.a in failed.switches or l.b in failed.switches}
        return PlanSource(fabric, t.cist_trees(plan), cut)
    if kind == "congestion":
        from dcnlab.view.flows import plan_flows
        fabric = planned[1]
        flows, tenants, neck, rate = plan_flows(fabric, planned[2])
        src = PlanSource(fabric)
        src.set_flows(flows, tenants, neck, rate, "model: rates from the fluid model" if "model_utilization"
                      in planned[2] else "plan: rates at the policy's target shares")
        return src
    raise ValueError(f"unknown plan kind {kind!r}")


def wait() -> None:
    """Keep serving until Ctrl-C (the CLI then exits 130 as for any interrupt)."""
    print("view: serving until Ctrl-C", file=sys.stderr, flush=True)
    while True:
        time.sleep(3600)


def _port_type(free: str) -> Callable[[str], int]:
    """An option's port on 127.0.0.1: 1024..65535 in ASCII digits (``٤٠٠١`` is no port:
    :mod:`dcnlab.topos.numbers`); argparse reports the error in one line, ending with ``free``: how that option
    asks for a free port."""
    def port(text: str) -> int:
        from dcnlab.topos.numbers import parse_uint
        try:
            value = parse_uint(text)
        except ValueError:
            value = -1
        if not 1024 <= value <= 65535:
            raise argparse.ArgumentTypeError(f"{text[:20]!r} is not a port; valid: 1024..65535{free}")
        return value
    return port


view_port = _port_type(", or --view alone for a free one")
"""``--view [PORT]`` (no value: a free port)."""
view_dir_port = _port_type(" (leave out --port for a free one)")
"""``dcnlab view RUN_DIR --port PORT`` (a value is required; without the option: a free port)."""


def add_view_option(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--view", nargs="?", const=0, type=view_port, metavar="PORT",
                   help=f"serve a live view of {what} on 127.0.0.1:PORT (default: a free port) behind a random "
                        "token; the URL is printed once")


def wrap_plan(func: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """A ``plan`` command that, with ``--view``, serves its result after printing it, until Ctrl-C."""
    @functools.wraps(func)
    def run(args: argparse.Namespace) -> int:
        code = func(args)
        planned = getattr(args, "planned", None)
        if getattr(args, "view", None) is None or planned is None:
            return code
        server = start(plan_source(planned), args.view)
        try:
            wait()
        finally:
            server.close()
        return code
    return run
