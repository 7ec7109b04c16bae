"""``dcnlab topo show|export``."""

from __future__ import annotations

import argparse
import sys

from dcnlab.results.outputs import image_file, output_file, write_text, writing
from dcnlab.topos import export
from dcnlab.topos.limits import SizeLimit
from dcnlab.topos.model import Fabric, Role
from dcnlab.topos.spec import parse_spec

EXPORT_LIMIT = SizeLimit("topo export writes", elements=1_000_000)
"""JSON and DOT are built in memory (about 0.7 KiB per node or link): fattree:k=100 is just above."""


def describe(fabric: Fabric) -> str:
    counts = fabric.counts()
    lines = [f"fabric    {fabric.spec}",
             "params    " + " ".join(f"{k}={v}" for k, v in fabric.params.items())]
    for role, label in ((Role.SWITCH, "switches"), (Role.SERVER, "servers"), (Role.HOST, "hosts")):
        if role in counts:
            lines.append(f"{label:<9} {counts[role]:,}")
    lines.append(f"nodes     {sum(counts.values()):,}")
    lines.append(f"links     {fabric.num_links():,}")
    d = fabric.diameter()
    what = "server-to-server" if fabric.kind == "bcube" else "host-to-host"
    lines.append(f"diameter  {d} links ({what})" if d is not None else "diameter  n/a")
    return "\n".join(lines)


def cmd_show(args: argparse.Namespace) -> int:
    for i, spec in enumerate(args.spec):
        if i:
            print()
        print(describe(parse_spec(spec)))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    if args.format == "png":
        from dcnlab.figures.render import render
        fabric = parse_spec(args.spec)
        out = image_file(args.output if args.output is not None else f"{fabric.kind}.png", "-o")
        with writing(out, "-o"):
            render(fabric, out)
        print(f"wrote {out}", file=sys.stderr)
        return 0
    fabric = parse_spec(args.spec, EXPORT_LIMIT)
    out = output_file(args.output, "-o") if args.output is not None else None
    text = export.to_json(fabric) if args.format == "json" else export.to_dot(fabric)
    text += "\n" if args.format == "json" else ""
    if out is not None:
        write_text(out, text, "-o")
        print(f"wrote {out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("topo", help="describe and export fabrics")
    tsub = p.add_subparsers(dest="topo_cmd", required=True)
    s = tsub.add_parser("show", help="counts, links, diameter and parameters of one or more fabrics")
    s.add_argument("spec", nargs="+", help="fabric spec, e.g. bcube:n=4,k=1")
    s.set_defaults(func=cmd_show)
    e = tsub.add_parser("export", help="write a fabric as json, dot or png")
    e.add_argument("spec")
    e.add_argument("--format", choices=("json", "dot", "png"), default="json")
    e.add_argument("-o", "--output", help="output file (default: stdout; png: <kind>.png)")
    e.set_defaults(func=cmd_export)
