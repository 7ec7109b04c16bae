"""The examples every ``dcnlab`` command shows at the end of its ``--help``.

They live in one table so that a test (``tests/test_help_examples.py``) can run each one as
written: the quick ones to exit status 0, the long ones and those that need root and BMv2 at least
through argument parsing. An example that stops working fails that test, not a reader.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass


@dataclass(frozen=True)
class Example:
    """One command line of a ``--help`` epilog.

    ``kind`` says how the test runs it: ``quick`` runs to exit 0 in a few seconds; ``long``
    (model sweeps, benchmarks) and ``emulation`` (root, BMv2, p4c) are only parsed."""

    argv: str
    kind: str = "quick"


EXAMPLES: dict[tuple[str, ...], tuple[Example, ...]] = {
    ("topo", "show"): (Example("topo show bcube:n=4,k=1 fattree:k=4 midplane: dragonfly:p=1,a=4,h=2"),),
    ("topo", "export"): (Example("topo export fattree:k=4 --format json -o fattree-k4.json"),
                         Example("topo export bcube:n=4,k=1 --format png -o bcube.png")),
    ("run",): (Example("run fattree:k=4", "emulation"),
               Example("run bcube:n=4,k=1 --bw 100 --hold 30", "emulation"),
               Example("run fattree:k=8 --check rules", "emulation"),
               Example("run fattree:k=4 --check both", "emulation"),
               Example("run fattree:k=4 --view", "emulation"),
               Example("run examples/router-lab/topology.json --check", "emulation"),
               Example("run examples/router-lab/topology.json --no-controller --grpc-tcp --hold 60", "emulation"),
               Example("run fattree:k=4 --servers localhost,node2", "emulation"),
               Example("run bcube:n=4,k=1 --servers localhost,root@10.0.0.2,root@10.0.0.3 --ssh-config lab.ssh", "emulation")),
    ("lab",): (Example("lab examples/basic-lab", "emulation"),
               Example("lab examples/basic-lab --exec 'h4 python3 receive.py --count 1 &' "
                       "--exec 'h1 python3 send.py 10.0.4.4 hello' --exec 'h1 ping -c 2 10.0.4.4'", "emulation"),
               Example("lab examples/basic-lab --grpc-tcp --no-controller", "emulation")),
    ("ptf",): (Example("ptf examples/ptf-router", "emulation"),
               Example("ptf examples/ptf-router router_tests.LpmTieBreak -- --failfast", "emulation"),
               Example("ptf --program examples/programs/router.p4 --tests examples/ptf-router/ptf --ports 4",
                       "emulation")),
    ("view",): (Example("view /var/tmp/dcnlab/runs/20260101-120000-a1b2c3-fattree-k-4", "emulation"),),
    ("compile",): (Example("compile", "emulation"), Example("compile examples/programs/router.p4", "emulation")),
    ("clean",): (Example("clean", "emulation"),),
    ("plan", "aggregation"): (
        Example("plan aggregation --topo bcube:n=4,k=1 --receiver v0 --senders v2,v5,v9,v10,v11,v14"),
        Example("plan aggregation --topo bcube:n=4,k=2 --shuffle --receivers random:5 --senders random:12 "
                "--seed 4"),
        Example("plan aggregation --topo fattree:k=4 --receiver h0_0_0 --senders h1_0_0,h2_1_1,h3_0_1")),
    ("plan", "multicast"): (Example("plan multicast --topo fattree:k=8 --colors 4 --pattern random:40:seed=1"),),
    ("plan", "congestion"): (Example("plan congestion --tenant tenant1:1:1 --tenant tenant2:1:3"),
                             Example("plan congestion --algo per-flow --tenant a:1:1 --tenant b:1:3"),
                             Example("plan congestion --model --seconds 0.05")),
    ("plan", "cist"): (Example("plan cist --topo dragonfly:p=1,a=4,h=2 --fail s0_2,s1_0-s2_3"),),
    ("plan", "cluster"): (Example("plan cluster fattree:k=4 --machines 2"),
                          Example("plan cluster bcube:n=8,k=2 --machines 2,4,8", "long")),
    ("reproduce", "aggregation"): (Example("reproduce aggregation --quick --emulate off", "long"),
                                   Example("reproduce aggregation --quick --cluster tcp://127.0.0.1:8786", "long"),
                                   Example("reproduce aggregation --emulate on --quick", "emulation")),
    ("reproduce", "multicast"): (Example("reproduce multicast --quick", "long"),
                                 Example("reproduce multicast --cluster tcp://127.0.0.1:8786", "long"),
                                 Example("reproduce multicast --emulate on", "emulation")),
    ("reproduce", "congestion"): (Example("reproduce congestion --emulate off --quick", "long"),
                                  Example("reproduce congestion --emulate off --cluster 127.0.0.1:8786", "long"),
                                  Example("reproduce congestion --emulate on --quick --algo per-flow", "emulation")),
    ("reproduce", "search"): (Example("reproduce search 002", "long"),),
    ("reproduce", "cist"): (Example("reproduce cist --quick --emulate off", "long"),
                            Example("reproduce cist --cluster tcp://127.0.0.1:8786", "long"),
                            Example("reproduce cist --emulate on --quick", "emulation")),
    ("reproduce", "all"): (Example("reproduce all --quick --emulate off", "long"),
                           Example("reproduce all --quick --out results/papers --workers 2", "long"),
                           Example("reproduce all --emulate off --cluster tcp://127.0.0.1:8786", "long"),
                           Example("reproduce all --emulate on", "emulation")),
    ("bench", "topo"): (Example("bench topo", "long"),),
    ("bench", "emu"): (Example("bench emu fattree:k=4", "emulation"),
                       Example("bench emu fattree:k=4 fattree:k=8 --check both --no-writes", "emulation"),
                       Example("bench emu fattree:k=12 --check rules --no-writes", "emulation"),
                       Example("bench emu fattree:k=4 --program examples/programs/router.p4 --repeat 3", "emulation"),
                       Example("bench emu --lab examples/basic-lab --repeat 3", "emulation")),
    ("bench", "chaos"): (Example("bench chaos --cycles 5", "emulation"),),
    ("bench", "aggregation"): (Example("bench aggregation", "long"),
                               Example("bench aggregation --no-dataplane --cluster tcp://127.0.0.1:8786", "long")),
    ("bench", "rounds"): (Example("bench rounds", "long"),
                          Example("bench rounds --rounds 200 --cluster tcp://127.0.0.1:8786", "long")),
    ("bench", "multicast"): (Example("bench multicast", "long"),),
    ("bench", "congestion"): (Example("bench congestion", "long"),),
    ("bench", "cist"): (Example("bench cist", "long"),),
    ("bench", "reproduce"): (Example("bench reproduce", "long"),
                             Example("bench reproduce --full --workers 2 --json", "long")),
}

NOTES = {"emulation": "  (root, BMv2 and p4c)"}


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, except that text with line breaks of its own (the examples) is kept as
    written; one-line descriptions are still wrapped to the terminal."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" in text:
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)

    def _format_args(self, action: argparse.Action, default_metavar: str) -> str:
        # an option whose value may still be left out in an old spelling (a bare --emulate) is shown with the
        # value it should be given: --emulate {auto,on,off}, not --emulate [{auto,on,off}]
        if getattr(action, "value_shown_required", False):
            return self._metavar_formatter(action, default_metavar)(1)[0]
        return super()._format_args(action, default_metavar)


def leaf_parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
                 ) -> dict[tuple[str, ...], argparse.ArgumentParser]:
    """Every command of ``parser`` that has no subcommands, keyed by its words (``("plan", "cist")``)."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return {path: parser}
    out: dict[tuple[str, ...], argparse.ArgumentParser] = {}
    for action in subs:
        for name, child in action.choices.items():
            out.update(leaf_parsers(child, (*path, name)))
    return out


def attach(parser: argparse.ArgumentParser) -> None:
    """Append each command's examples to its ``--help`` (after any epilog it has)."""
    for path, leaf in leaf_parsers(parser).items():
        examples = EXAMPLES.get(path)
        if not examples:
            continue
        text = "examples:\n" + "\n".join(f"  dcnlab {e.argv}{NOTES.get(e.kind, '')}" for e in examples)
        leaf.epilog = f"{leaf.epilog}\n\n{text}" if leaf.epilog else text
        leaf.formatter_class = HelpFormatter
