"""The live view inside Jupyter: a cell's output frames the view's page, served on 127.0.0.1 with its token.

``dcnlab.show(fabric)`` or ``dcnlab.show(fabric, plan)`` returns a :class:`View`; as the last expression of a
cell, Jupyter (Notebook, Lab, VS Code) renders it through :meth:`View._repr_html_`: an ``<iframe>`` of the view's
URL and a link that opens it in a tab of its own. A running ``dcnlab.Network`` renders the same way
(:meth:`dcnlab.api.Network._repr_html_`).

The view's server answers as it always does (loopback only, the token in the URL, read-only). The one
difference: the CLI's view refuses to be framed by any page (``X-Frame-Options: DENY``, ``frame-ancestors
'none'``), while a view made here lets pages from loopback origins frame it (:data:`FRAME_ANCESTORS`: a Jupyter
server on this machine, VS Code's notebook view, a rendered notebook served locally). Framing gives such a page
nothing it could not read from the URL it already holds. The browser must reach 127.0.0.1 of the kernel's
machine: with Jupyter on another machine, forward the view's port too (``ssh -L PORT:127.0.0.1:PORT``).
"""

from __future__ import annotations

import html
import os
from typing import Any

from dcnlab.topos.errors import UserError
from dcnlab.view.server import ViewServer, _Handler

__all__ = ["FRAME_ANCESTORS", "View", "embeddable", "iframe", "show"]

FRAME_ANCESTORS = ("http://127.0.0.1:*", "http://localhost:*", "https://127.0.0.1:*", "https://localhost:*",
                   "vscode-webview:")
"""The origins whose pages may frame a notebook's view (CSP ``frame-ancestors``)."""

HEIGHT = 560
"""The frame's height in pixels (its width is the cell's)."""


def frame_policy(csp: str) -> str:
    """``csp`` with its ``frame-ancestors`` directive replaced by :data:`FRAME_ANCESTORS`."""
    kept = [d.strip() for d in csp.split(";") if d.strip() and d.split()[0].lower() != "frame-ancestors"]
    return "; ".join([*kept, "frame-ancestors " + " ".join(FRAME_ANCESTORS)])


class _FramedHandler(_Handler):
    """The view's handler, but framable from loopback origins (every other header as the view sends it)."""

    def send_header(self, keyword: str, value: str) -> None:
        if keyword.lower() == "x-frame-options":
            return
        if keyword.lower() == "content-security-policy":
            value = frame_policy(value)
        super().send_header(keyword, value)


def embeddable(server: ViewServer) -> ViewServer:
    """Let pages from :data:`FRAME_ANCESTORS` frame ``server`` (from its next request on)."""
    server.RequestHandlerClass = _FramedHandler
    return server


def iframe(url: str, height: int = HEIGHT) -> str:
    """The HTML a notebook cell shows for the view at ``url``."""
    src = html.escape(url, quote=True)
    return (f'<iframe src="{src}" title="dcnlab live view" width="100%" height="{int(height)}" '
            f'style="border:1px solid #ccc;border-radius:4px"></iframe>'
            f'<div style="font-size:smaller"><a href="{src}" target="_blank" rel="noopener">open the live view in '
            f'a tab</a> (served by this kernel on 127.0.0.1 until it stops)</div>')


class View:
    """A live view a notebook shows inline; also a context manager that closes it.

    ``url`` is the page with its token; :meth:`close` stops the server (the kernel's exit does too)."""

    def __init__(self, server: ViewServer, height: int = HEIGHT) -> None:
        self.server = embeddable(server)
        self.height = height

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def source(self) -> Any:
        """What the view draws (:mod:`dcnlab.view.sources`): ``view.source.set_trees(...)`` changes the trees."""
        return self.server.source

    def close(self) -> None:
        self.server.close()

    def _repr_html_(self) -> str:
        return iframe(self.url, self.height)

    def __repr__(self) -> str:
        return f"<dcnlab view {self.url}>"

    def __enter__(self) -> View:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


_PLAN_KINDS = {"dcnlab.controller.multicast": "multicast", "dcnlab.controller.aggregation": "aggregation",
               "dcnlab.controller.cist": "cist"}


def _kind(plan: Any) -> str:
    module = type(plan).__module__
    for prefix, kind in _PLAN_KINDS.items():
        if module == prefix or module.startswith(prefix + "."):
            return kind
    raise UserError(f"show: plan={type(plan).__name__!r:.60} is no planner's result; valid: a multicast plan "
                    "(dcnlab.multicast.planning.plan), an aggregation tree or shuffle plan (dcnlab.aggregation), "
                    "a CIST plan (dcnlab.cist)")


def show(topology: Any, plan: Any = None, *, failures: Any = None, port: int | None = None,
         height: int = HEIGHT) -> View:
    """The live view of a fabric, or of a plan on it, for a notebook cell: ``dcnlab.show("fattree:k=4")``.

    ``topology``: a fabric spec, a topology file or a :class:`~dcnlab.topos.model.Fabric` (for a multicast plan,
    the hierarchy it was planned on). ``plan``: what a planner returned: a multicast ``PlanResult``, an
    aggregation tree or shuffle plan, a ``CistPlan`` (``failures``: the CISTs' failed elements, drawn cut). The
    trees are listed in the page's picker. ``port``: 1024..65535 (default: a free one)."""
    from dcnlab.view import plan_source, start
    from dcnlab.view.sources import PlanSource

    if port is not None and not (isinstance(port, int) and 1024 <= port <= 65535):
        raise UserError(f"show: port={port!r:.20}; valid: 1024..65535, or None for a free one")
    if plan is None:
        source: Any = PlanSource(_fabric(topology))
    else:
        kind = _kind(plan)
        if kind == "multicast":
            planned: tuple[Any, ...] = (kind, topology, plan)
        elif kind == "cist":
            planned = (kind, _fabric(topology), plan, failures)
        else:
            planned = (kind, _fabric(topology), plan)
        source = plan_source(planned)
    return View(start(source, port, say=lambda _m: None), height)


def _fabric(topology: Any) -> Any:
    from dcnlab.topos.files import load_topology, looks_like_file
    from dcnlab.topos.model import Fabric
    from dcnlab.topos.spec import parse_spec

    if isinstance(topology, Fabric):
        return topology
    if hasattr(topology, "fabric") and isinstance(topology.fabric, Fabric):     # a multicast hierarchy
        return topology.fabric
    if isinstance(topology, (str, os.PathLike)):
        text = os.fspath(topology)
        return load_topology(text) if isinstance(topology, os.PathLike) or looks_like_file(text) else parse_spec(text)
    raise UserError(f"show: topology={type(topology).__name__!r:.40}; valid: a fabric spec, a topology file or a "
                    "Fabric")
