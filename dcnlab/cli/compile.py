"""``dcnlab compile [PROGRAM]``: compile a program with p4c through the content-keyed cache.

``PROGRAM`` is a program of ``p4src/`` by name (``dcnlab``, the default, ``aggregation``, ...) or a
path to a user's ``FILE.p4``, compiled as ``dcnlab run --program FILE.p4`` compiles it (the same
cache, the same p4c arguments; its ``#include "..."`` files are looked up beside it). So a user can
check that a program compiles, and read p4c's message, before a run.

In order: the argument is checked (a missing file, a directory, a FIFO, a file that is not ``.p4``:
one line, exit status 2), then p4c is looked for (:func:`dcnlab.emu.preflight.require`, one
line, exit 2), then p4c runs. The answer names where the compiled JSON and P4Info are (the cache
paths). A program that does not compile: p4c's own message as p4c printed it (control characters
escaped), then one line ``dcnlab: error: p4c failed on FILE (exit N); its message is above``, exit 1.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from dcnlab.cli.argtypes import one_line
from dcnlab.emu import preflight
from dcnlab.topos.inputs import escape, file_problem, quote, show_path

__all__ = ["Program", "add_parser", "cmd_compile", "program_arg"]

COMPILE_FAILED = 1
"""Exit status of a program that p4c refuses (2 stays the status of a usage error)."""


@dataclass(frozen=True)
class Program:
    """What ``dcnlab compile`` compiles: a program of ``p4src/`` (``path`` None) or a user's file."""

    name: str
    path: Path | None = None

    def shown(self) -> str:
        return self.name if self.path is None else show_path(self.path)


def builtin_programs() -> list[str]:
    from dcnlab.p4src.compiler import SRC_DIR
    return sorted(f.stem for f in SRC_DIR.glob("*.p4"))


def program_arg(text: str) -> Program:
    """``dcnlab compile``'s program, checked before anything runs: a built-in name, or a readable
    regular file whose name ends in ``.p4`` (resolved as ``run --program`` resolves it)."""
    names = builtin_programs()
    valid = f"valid: a program of p4src/ ({', '.join(names)}) or an existing FILE.p4"
    if text in names:                       # a bare name: p4src's program (a path has a / or .p4)
        return Program(text)
    if not text:
        raise argparse.ArgumentTypeError(f"'' is empty; {valid}")
    path = Path(text)
    shown = f"'{show_path(text)}'" if "/" in text else quote(text)     # a path keeps its end
    why = file_problem(path)
    if path.suffix != ".p4":
        if why is None:
            why = "is not a P4 source file (its name does not end in .p4)"
        elif "/" not in text and why == "does not exist":
            why = "is not a program of p4src/ nor a file"
        raise argparse.ArgumentTypeError(f"{shown} {why}; {valid}")
    if why is not None:
        raise argparse.ArgumentTypeError(f"{shown} {why}; {valid}")
    path = path.absolute()
    return Program(path.stem, path)


def print_p4c_message(output: str) -> None:
    """p4c's message as p4c printed it (its lines and carets), each line's control characters escaped
    (p4c quotes the user's source)."""
    for line in output.rstrip().splitlines():
        print(escape(line), file=sys.stderr)


def cmd_compile(args: argparse.Namespace) -> int:
    from dcnlab.cli.errors import UserError
    from dcnlab.controller.runtime.errors import RuntimeErrorBase
    from dcnlab.p4src.compiler import CompileError, compile_program

    prog: Program = args.program
    preflight.require("dcnlab compile", tools=preflight.COMPILE_TOOLS, root=False)
    try:
        if prog.path is None:
            built = compile_program(prog.name)
        else:
            built = compile_program(prog.path.stem, src_dir=prog.path.parent)
    except CompileError as e:
        if e.output is None:                # not p4c's refusal (e.g. the file went away): one line
            raise UserError(str(e)) from None
        print_p4c_message(e.output)
        print(f"dcnlab: error: p4c failed on {prog.shown()} (exit {e.status}); its message is above",
              file=sys.stderr)
        return COMPILE_FAILED
    except RuntimeErrorBase as e:
        raise UserError(one_line(str(e))) from None
    if args.p4info:
        print(built.p4info)
    else:
        print(f"{prog.shown()}: {'cached' if built.cached else 'compiled'} (key {built.key})\n"
              f"  json   {built.json}\n  p4info {built.p4info}")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    k = sub.add_parser("compile", help="compile a program with p4c (p4src/'s by name, or your FILE.p4) into the "
                                       "content-keyed cache; prints where its JSON and P4Info are")
    k.add_argument("program", nargs="?", default=Program("dcnlab"), type=program_arg, metavar="PROGRAM",
                   help="a program of p4src/ by name, without .p4 (default dcnlab), or a path to your own "
                        "FILE.p4, compiled as run --program compiles it; one that does not compile shows "
                        "p4c's message (exit status 1)")
    k.add_argument("--p4info", action="store_true", help="print only the P4Info path")
    k.set_defaults(func=cmd_compile)
