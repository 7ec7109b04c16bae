"""Fabric specs: ``bcube:n=4,k=1``, ``fattree:k=4``, ``midplane:q=..,m=..,p=..,k=..,w=..,cns=..,terminals=..``,
``dragonfly:p=1,a=4,h=2,arrangement=relative|absolute|circulant``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dcnlab.topos.bcube import BCube
from dcnlab.topos.dragonfly import ARRANGEMENTS, Dragonfly
from dcnlab.topos.errors import SpecError
from dcnlab.topos.fattree import FatTree
from dcnlab.topos.limits import SizeLimit
from dcnlab.topos.midplane import PAPER_INSTANCE, Midplane
from dcnlab.topos.model import Fabric
from dcnlab.topos.numbers import parse_int


@dataclass(frozen=True)
class FabricKind:
    name: str
    build: Callable[..., Fabric]
    params: dict[str, str]
    """parameter -> help text (type int unless listed in ``choices``)."""
    defaults: dict[str, int | str]
    choices: dict[str, tuple[str, ...]]
    example: str


KINDS: dict[str, FabricKind] = {
    "bcube": FabricKind("bcube", BCube, {"n": "switch ports, n >= 2", "k": "levels - 1, k >= 0"}, {}, {},
                        "bcube:n=4,k=1"),
    "fattree": FabricKind("fattree", FatTree, {"k": "switch ports, even, k >= 2"}, {}, {}, "fattree:k=4"),
    "midplane": FabricKind("midplane", Midplane,
                           {"q": "L0 per CN", "m": "L1 per CN", "p": "uplinks per L1", "k": "L2 per TN",
                            "w": "L3 per TN", "cns": "computing midplanes, 1..k*w",
                            "terminals": "terminals per L0"},
                           dict(PAPER_INSTANCE), {}, "midplane:q=4,m=2,p=2,k=2,w=2,cns=4,terminals=2"),
    "dragonfly": FabricKind("dragonfly", Dragonfly,
                            {"p": "hosts per router, p >= 0", "a": "routers per group, a >= 1",
                             "h": "global links per router, h >= 1", "arrangement": "global-link arrangement"},
                            {"p": 1, "arrangement": "relative"}, {"arrangement": ARRANGEMENTS},
                            "dragonfly:p=1,a=4,h=2,arrangement=relative"),
}


def parse_spec(spec: str, limit: SizeLimit | None = None) -> Fabric:
    """Build the fabric a spec names. Raises :class:`SpecError` with a precise message.

    Parameters are integers of ASCII digits (``k=٤`` and ``k=4_0`` are errors). With ``limit``, a
    fabric larger than the limit is refused from its closed-form counts, before anything is built."""
    kind_name, _, body = spec.strip().partition(":")
    kind = KINDS.get(kind_name)
    if kind is None:
        raise SpecError(f"unknown fabric {kind_name!r}; valid: {', '.join(KINDS)} (e.g. {KINDS['bcube'].example})")
    values: dict[str, int | str] = dict(kind.defaults)
    given: set[str] = set()
    for item in filter(None, (s.strip() for s in body.split(","))):
        key, eq, raw = item.partition("=")
        key, raw = key.strip(), raw.strip()
        if not eq or key not in kind.params:
            raise SpecError(f"{kind.name}: unknown parameter {key!r}; valid: {', '.join(kind.params)} "
                            f"(e.g. {kind.example})")
        if key in given:
            raise SpecError(f"{kind.name}: parameter {key} is given twice; valid: each of "
                            f"{', '.join(kind.params)} at most once (e.g. {kind.example})")
        given.add(key)
        if key in kind.choices:
            values[key] = raw
        else:
            try:
                values[key] = parse_int(raw)
            except ValueError:
                raise SpecError(f"{kind.name}: parameter {key}={raw!r} is not an integer; "
                                f"valid: {kind.params[key]}") from None
    missing = [p for p in kind.params if p not in values]
    if missing:
        valid = "; ".join(f"{p}: {kind.params[p]}" for p in missing)
        raise SpecError(f"{kind.name}: missing parameter(s) {', '.join(missing)}; valid: {valid} "
                        f"(e.g. {kind.example})")
    fabric = kind.build(**values)
    if limit is not None:
        limit.check(fabric)
    return fabric
