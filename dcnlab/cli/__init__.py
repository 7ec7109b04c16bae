"""The ``dcnlab`` command line: argument parsing and one thin function per command, nothing else.

Holds the parser (:func:`build_parser`, here; :func:`main` is the console script), the shared argparse pieces
(:mod:`~dcnlab.cli.argtypes`), the ``--help`` examples (:mod:`~dcnlab.cli.examples`) and one module per
command or mechanism (``topo``, ``run``, ``lab``, ``compile``, ``view``, ``cluster``, ``bench``, ``plan``
and ``aggregation``/``multicast``/``congestion``/``cist`` for ``plan|reproduce|bench <mechanism>``). A
command function checks its arguments, calls the work below and prints.

May import: everything below it (:mod:`dcnlab.bench`, :mod:`dcnlab.report`, :mod:`dcnlab.reproduce`,
:mod:`dcnlab.sweep`, :mod:`dcnlab.figures`, :mod:`dcnlab.results`, the API and the engine). Nothing imports it
but ``dcnlab.__main__``.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

from dcnlab.cli.argtypes import Parser, one_line
from dcnlab.cli.errors import UserError
from dcnlab.controller.runtime.protobuf_check import require_protobuf
from dcnlab.topos.errors import SpecError

EXAMPLES = """\
fabric specs:
  bcube:n=4,k=1
  fattree:k=4
  midplane:q=32,m=16,p=6,k=32,w=16,cns=64,terminals=16   (all optional; defaults = paper instance)
  dragonfly:p=1,a=4,h=2,arrangement=relative|absolute|circulant
"""


def version() -> str:
    """dcnlab's installed version (its package metadata), or the source tree's when not installed."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version
    try:
        return dist_version("dcnlab")
    except PackageNotFoundError:
        return "unknown (not installed)"


# Each command and the module that registers it (several commands may share one). ``main`` imports only the
# module of the command it was given, so ``dcnlab run`` does not pay for the report, the benchmarks or the
# reproductions (about 0.1 s of imports); ``--help`` without a command, or an unknown one, builds them all.
COMMANDS: dict[str, str] = {
    "topo": "topo", "bench": "bench", "run": "run", "compile": "run", "clean": "run", "lab": "lab",
    "plan": "plan", "reproduce": "plan", "view": "view", "ptf": "ptf",
}
MODULES: tuple[str, ...] = tuple(dict.fromkeys(COMMANDS.values()))


class _Version(argparse.Action):
    """``--version``: reads the package metadata (``importlib.metadata``, about 20 ms) only when asked."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0,
                         help=help or "show program's version number and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        parser._print_message(f"{parser.prog} {version()}\n", sys.stdout)
        parser.exit()


def command_of(argv: list[str]) -> str | None:
    """The command ``argv`` names: its first word that is not an option (the top level has only flags)."""
    for word in argv:
        if word == "--":
            return None
        if not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The whole parser, or, given the command line, only what its command needs (same parse, fewer imports)."""
    import importlib

    from dcnlab.cli import examples

    command = command_of(argv) if argv is not None else None
    modules = (COMMANDS[command],) if command else MODULES
    parser = Parser(prog="dcnlab", description="P4/Mininet data-center fabric testbed",
                    epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv for debug)")
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="cmd", required=True)
    for name in modules:
        importlib.import_module(f"dcnlab.cli.{name}").add_parser(sub)
    examples.attach(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        require_protobuf()    # cheap (under 1 ms); a hidden google.protobuf is one line before any command
        parser = build_parser(sys.argv[1:] if argv is None else list(argv))
    except UserError as e:
        print(f"dcnlab: error: {one_line(str(e))}", file=sys.stderr)
        return 2
    words = sys.argv[1:] if argv is None else list(argv)
    try:
        if any(w.startswith("--emulate=") for w in words):
            from dcnlab.cli.emulate import check_spelled

            check_spelled(words)
    except UserError as e:
        print(f"dcnlab: error: {one_line(str(e))}", file=sys.stderr)
        return 2
    try:
        args = parser.parse_args(argv)      # --help, --version and --algo list print here
    except BrokenPipeError:
        return _reader_left()
    logging.basicConfig(level=[logging.WARNING, logging.INFO, logging.DEBUG][min(args.verbose, 2)],
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        return int(args.func(args) or 0)
    except (SpecError, UserError) as e:
        print(f"dcnlab: error: {one_line(str(e))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("dcnlab: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return _reader_left()


def _reader_left() -> int:
    """``dcnlab ... | head``: the reader left; say nothing more (not even at exit's flush)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 141


if __name__ == "__main__":
    sys.exit(main())
