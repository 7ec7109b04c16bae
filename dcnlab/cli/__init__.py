"""The ``dcnlab`` command line: argument parsing and one thin function per command, nothing else.

Holds the parser (:func:`build_parser`, here; :func:`main` is the console script), the shared argparse pieces
(:mod:`~dcnlab.cli.argtypes`), the ``--help`` examples (:mod:`~dcnlab.cli.examples`) and one module per
command or mechanism (``topo``, ``run``, ``lab``, ``compile``, ``view``, ``cluster``, ``bench``, ``plan``
and ``aggregation``/``multicast``/``congestion``/``cist`` for ``plan|reproduce|bench <mechanism>``). A
command function checks its arguments, calls the work below and prints.

May import: everything below it (:mod:`dcnlab.bench`, :mod:`dcnlab.report`, :mod:`dcnlab.reproduce`,
:mod:`dcnlab.sweep`, :mod:`dcnlab.figures`, :mod:`dcnlab.results`, the API and the engine). Nothing imports it
but ``dcnlab.__main__``.

:func:`main` is where every command ends: an error is one line (``dcnlab: error: ...``, status 2); Ctrl-C,
SIGTERM and SIGHUP are ``KeyboardInterrupt``, one line ``dcnlab: interrupted`` and status 130, after the
command has stopped what it started (:func:`signals_interrupt`: the local pool's workers and any other
``multiprocessing`` child are ended at once, as Ctrl-C ends them); argparse's exits (``--help``, ``--version``,
``--algo list``: 0; a usage error: 2) stay what they are, and any other ``SystemExit`` (a user's code calling
``sys.exit()``) is an error line naming where it was called, never a silent status 0. While ``plan`` and
``reproduce`` run, only dcnlab's own code writes to stdout (:class:`OwnStdout`): a plug-in's prints go to
stderr and cannot corrupt ``--json``.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, NoReturn, TextIO

from dcnlab.cli.argtypes import Parser, one_line
from dcnlab.cli.errors import ParserExit, UserError
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


class _Parser(Parser):
    """dcnlab's parser (and every subcommand's, argparse making them of the same class): its own exits, help,
    version, a listing, a usage error, are :class:`ParserExit`, which :func:`main` lets through as they are;
    any other ``SystemExit`` during parsing (a plug-in imported for ``--algo``) is not dcnlab's."""

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        try:
            super().exit(status, message)
        except SystemExit as e:
            raise ParserExit(e.code) from None
        raise ParserExit(status)         # not reached: argparse's exit always raises

    def error(self, message: str) -> NoReturn:
        try:
            super().error(message)
        except SystemExit as e:
            raise ParserExit(e.code) from None
        raise ParserExit(2)              # not reached: Parser.error always raises


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
    parser = _Parser(prog="dcnlab", description="P4/Mininet data-center fabric testbed",
                    epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv for debug)")
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="cmd", required=True)
    for name in modules:
        importlib.import_module(f"dcnlab.cli.{name}").add_parser(sub)
    examples.attach(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    try:
        with signals_interrupt(), own_stdout(command_of(words) in PLUGIN_COMMANDS):
            return _main(words, argv)
    except ParserExit:
        raise                   # --help, --version, --algo list (0), a usage error (2): argparse's own
    except SystemExit as e:
        print(f"dcnlab: error: {one_line(stray_exit(e))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        _say_interrupted()
        return 130
    except BrokenPipeError:
        return _reader_left()


def _main(words: list[str], argv: list[str] | None) -> int:
    try:
        require_protobuf()    # cheap (under 1 ms); a hidden google.protobuf is one line before any command
        parser = build_parser(words)
        if any(w.startswith("--emulate=") for w in words):
            from dcnlab.cli.emulate import check_spelled

            check_spelled(words)
    except UserError as e:
        print(f"dcnlab: error: {one_line(str(e))}", file=sys.stderr)
        return 2
    args = parser.parse_args(argv)      # --help, --version and --algo list print here (plug-ins are imported)
    logging.basicConfig(level=[logging.WARNING, logging.INFO, logging.DEBUG][min(args.verbose, 2)],
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        return int(args.func(args) or 0)
    except (SpecError, UserError) as e:
        print(f"dcnlab: error: {one_line(str(e))}", file=sys.stderr)
        return 2


def stray_exit(e: SystemExit) -> str:
    """What a ``SystemExit`` that is not dcnlab's own says: ``sys.exit(CODE)`` and the file and line of the code
    that called it (the last frame of its traceback)."""
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = f"code in {tb.tb_frame.f_code.co_filename}, line {tb.tb_lineno}," if tb is not None else "code"
    call = "sys.exit()" if e.code is None else f"sys.exit({e.code!r:.300})"
    return f"{where} called {call} before the command had finished"


# -- signals -----------------------------------------------------------------------------------------------

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
"""What ``timeout``, a service manager, a batch scheduler or a closed terminal send: handled as Ctrl-C."""
_MAIN_PID = 0
_RECEIVED: list[int] = []


def _on_stop_signal(signum: int, frame: FrameType | None) -> None:
    if os.getpid() != _MAIN_PID:        # a forked child that inherited the handler: end as by default
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return
    _RECEIVED.append(signum)
    mp = sys.modules.get("multiprocessing")
    if mp is not None:                  # Ctrl-C reaches them through the terminal; SIGTERM only this process
        for child in mp.active_children():
            child.terminate()
    raise KeyboardInterrupt


@contextmanager
def signals_interrupt() -> Iterator[None]:
    """SIGTERM and SIGHUP as Ctrl-C while a command runs: ``KeyboardInterrupt`` in this process, which every
    command's cleanup already handles, after this process's ``multiprocessing`` children (the local pool's
    workers, a solver's child) have been sent SIGTERM. A signal that is ignored (``nohup``) stays ignored, a
    handler of the caller's stays; the previous handlers come back when the command ends."""
    global _MAIN_PID
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _MAIN_PID = os.getpid()
    _RECEIVED.clear()
    old = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    for s, handler in old.items():
        if handler is signal.SIG_DFL:
            signal.signal(s, _on_stop_signal)
    try:
        yield
    finally:
        for s, handler in old.items():
            if handler is signal.SIG_DFL:
                signal.signal(s, handler)


def _say_interrupted() -> None:
    how = f" ({signal.Signals(_RECEIVED[0]).name})" if _RECEIVED else ""
    try:
        print(f"dcnlab: interrupted{how}", file=sys.stderr)
    except OSError:                     # a hang-up: the terminal may be gone
        pass


# -- stdout while plug-ins run -----------------------------------------------------------------------------

PLUGIN_COMMANDS = ("plan", "reproduce")
"""The commands that run users' code (``--algo``, ``--policy``, installed plug-ins)."""


class OwnStdout:
    """``sys.stdout`` while a command that runs plug-ins runs: what dcnlab's own code writes goes to the real
    stdout, anything else (a plug-in's ``print``, a library's) to stderr. The writer is the first frame up the
    stack that is not the standard library's (``print``, ``pprint``, ``json.dump`` are looked through). The
    local pool's workers send all their stdout to stderr (:func:`dcnlab.sweep.pool._init_worker`)."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        self._out, self._err = out, err

    def write(self, text: str) -> int:
        return (self._out if _from_dcnlab(sys._getframe(1)) else self._err).write(text)

    def writelines(self, lines: Any) -> None:
        stream = self._out if _from_dcnlab(sys._getframe(1)) else self._err
        for line in lines:
            stream.write(line)

    def flush(self) -> None:
        self._err.flush()
        self._out.flush()

    def __getattr__(self, name: str) -> Any:   # fileno, isatty, encoding, buffer: the real stdout's
        return getattr(self._out, name)


def _from_dcnlab(frame: FrameType | None) -> bool:
    while frame is not None:
        top = str(frame.f_globals.get("__name__") or "").partition(".")[0]
        if top == "dcnlab":
            return True
        if top not in sys.stdlib_module_names:
            return False
        frame = frame.f_back
    return False


@contextmanager
def own_stdout(on: bool = True) -> Iterator[None]:
    """``sys.stdout`` is an :class:`OwnStdout` inside the block (when ``on``)."""
    if not on:
        yield
        return
    real = sys.stdout
    sys.stdout = OwnStdout(real, sys.stderr)      # type: ignore[assignment]
    try:
        yield
    finally:
        if isinstance(sys.stdout, OwnStdout):
            sys.stdout = real


def _reader_left() -> int:
    """``dcnlab ... | head``: the reader left; say nothing more (not even at exit's flush)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 141


if __name__ == "__main__":
    sys.exit(main())
