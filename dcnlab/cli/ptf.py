"""``dcnlab ptf``: PTF data-plane tests of a P4 program against one BMv2 switch (:mod:`dcnlab.emu.ptf`).

``dcnlab ptf DIR [TEST...]``: an exercise directory in the p4lang tutorials' layout, its program found as
``dcnlab lab`` finds it (``--program``, the Makefile's ``DEFAULT_PROG``, the one ``*.p4``) and its tests in
``DIR/ptf`` (or ``--tests``). ``dcnlab ptf --program FILE.p4 --tests DIR [TEST...]``: any program and test
directory (what the tutorials' ``runptf.sh`` tests: ``--program solution/basic.p4 --tests ptf``). Checked
before anything is created, each problem one line: PTF installed, the program, the tests, the ports, root
and the toolchain. Then the program is compiled through the content-keyed cache into ``build/`` of the
directory the tests run in (DIR, or the tests directory's parent; ``logs/`` is made there too, as ``make
test`` does), one BMv2 comes up in a namespace of its own and PTF runs there. Words after DIR (after ``--``
for options) go to PTF as they are: test names and groups, ``--failfast``, ``--test-case-timeout 30``, ...
The exit status is PTF's (1 when a test failed); 2 for bad input, 130 on Ctrl-C. Everything started is
stopped, also on errors, Ctrl-C and SIGTERM.
"""

from __future__ import annotations

import argparse
import shlex
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dcnlab.cli.errors import UserError

if TYPE_CHECKING:
    from dcnlab.emu.lab import Lab
    from dcnlab.emu.network import FabricNetwork


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def _is_dir(path: Path) -> bool:
    """``path.is_dir()``, False where the name itself cannot be looked up (ENAMETOOLONG raises there)."""
    try:
        return path.is_dir()
    except OSError:
        return False


def resolve(args: argparse.Namespace) -> tuple[Path, Path, Path, list[str]]:
    """(program, tests, the directory the tests run in, PTF's own words) from the command line; creates nothing."""
    from dcnlab.cli.run import check_program
    from dcnlab.emu.lab import lab_program
    from dcnlab.emu.ptf import check_passthrough, check_tests
    from dcnlab.topos.inputs import file_problem, quote

    words = list(args.words)
    if args.program is not None and args.tests is not None:
        program = check_program(args.program)
        assert program is not None
        tests = check_tests(args.tests)
        return program, tests, tests.parent, check_passthrough(words)
    if not words or words[0].startswith("-"):
        raise UserError("give an exercise directory DIR (its P4 program and a ptf/ directory of tests), or "
                        "--program FILE.p4 and --tests DIR")
    given, words = words[0], words[1:]
    d = Path(given).absolute()  # as `dcnlab lab DIR`: the shell expands ~, a name like ~0 is a name
    if not _is_dir(d):
        raise UserError(f"directory {quote(given, 200)} {file_problem(d) or 'is not a directory'}; valid: an "
                        f"exercise directory with its P4 program and a ptf/ directory of tests")
    program = lab_program(d, args.program)
    if args.tests is None and not (d / "ptf").is_dir():
        raise UserError(f"directory {quote(given, 200)} has no ptf/ directory of tests; give one with --tests DIR")
    tests = check_tests(args.tests if args.tests is not None else d / "ptf")
    return program, tests, d, check_passthrough(words)


def cmd_ptf(args: argparse.Namespace) -> int:
    from dcnlab.cli.compile import COMPILE_FAILED, print_p4c_message
    from dcnlab.cli.run import require_root
    from dcnlab.controller.runtime.errors import RuntimeErrorBase
    from dcnlab.emu.lab import build_into
    from dcnlab.emu.ptf import PtfBench, check_ports, check_test_params, ptf_script
    from dcnlab.p4src.compiler import CompileError

    ptf_script()                            # PTF installed: the first thing said when it is not
    program, tests, workdir, words = resolve(args)
    check_ports(args.ports)
    check_test_params(args.test_params)
    require_root("dcnlab ptf")              # root and every binary, before anything is compiled or created
    say = (lambda m: print(f"  {m}", file=sys.stderr, flush=True))
    old_term = signal.signal(signal.SIGTERM, _raise_interrupt)
    bench: PtfBench | None = None
    try:
        try:
            built = build_into(program, workdir)     # content-keyed cache, copied to build/
        except CompileError as e:
            if e.output is None:
                raise UserError(str(e)) from None
            print_p4c_message(e.output)
            print(f"dcnlab: error: p4c failed on {program} (exit {e.status}); its message is above", file=sys.stderr)
            return COMPILE_FAILED
        del built                           # its copies in build/, what the tests are given (as runptf.sh does)
        p4info = workdir / "build" / f"{program.stem}.p4.p4info.txtpb"
        config = workdir / "build" / f"{program.stem}.json"
        bench = PtfBench(p4info, config, args.ports, name=f"ptf-{program.stem}",
                         log_level=args.log_level or "off").start()
        assert bench.run is not None
        say(f"{program.name}: BMv2 with {args.ports} ports up in namespace {bench.netns}, P4Runtime at "
            f"{bench.grpc_addr} (device 0); PTF on {tests} in {workdir}; logs in {bench.run.path}")
        rc = bench.run_tests(tests, args.test_params, words, cwd=workdir)
        say(f"PTF exited with status {rc}")
        return rc
    except RuntimeErrorBase as e:
        raise UserError(str(e)) from None
    finally:
        try:
            if bench is not None:
                bench.stop()
                say("torn down")
        finally:
            signal.signal(signal.SIGTERM, old_term)


def add_parser(sub: argparse._SubParsersAction) -> None:
    from dcnlab.cli.argtypes import ranged
    from dcnlab.emu.ptf import DEFAULT_PORTS, DEFAULT_TEST_CASE_TIMEOUT, MAX_PORTS

    p = sub.add_parser("ptf", help="run PTF data-plane tests of a P4 program against one BMv2 switch",
                       description="Run PTF (p4lang's Packet Test Framework) tests of a P4 program against one BMv2 "
                       "switch whose ports are veth pairs in a network namespace of the run; PTF runs in there too, "
                       "with the test parameters grpcaddr (the switch's P4Runtime Unix socket), device_id (0), "
                       "p4info and config. Nothing is created in the machine's own namespace and nothing listens "
                       "on its localhost:9559, so several runs can go at once. Needs root, BMv2, p4c and PTF "
                       f"(pip install 'dcnlab[ptf]'). The tests run in DIR (or the tests directory's parent); "
                       f"PTF's --test-case-timeout is {DEFAULT_TEST_CASE_TIMEOUT:g} s unless given after --; its "
                       f"log is ptf.log in the run directory.")
    p.add_argument("words", nargs="*", metavar="DIR TEST",
                   help="the exercise directory (its P4 program, tests in DIR/ptf; not with both --program and "
                        "--tests), then what goes to PTF as it is: test names or groups, and after -- PTF's own "
                        "options (--failfast, --test-case-timeout SECONDS, --list, ...)")
    p.add_argument("--program", metavar="FILE.p4",
                   help="the program (default: DIR's, found as dcnlab lab finds it)")
    p.add_argument("--tests", metavar="DIR", help="the directory of PTF tests (default: DIR/ptf)")
    p.add_argument("--ports", type=ranged(int, 1, MAX_PORTS), default=DEFAULT_PORTS, metavar="N",
                   help=f"switch ports 0..N-1, each a veth pair whose other end PTF drives (default {DEFAULT_PORTS}, "
                        f"as the tutorials' tests; at most {MAX_PORTS}: BMv2 binds at most 512 interfaces and port "
                        f"511 is v1model's drop port)")
    p.add_argument("-t", "--test-params", metavar="'K=V;...'",
                   help="more PTF test parameters, after dcnlab's (one given here overrides dcnlab's)")
    p.add_argument("--log-level", choices=("off", "trace", "debug", "info", "warn", "error"),
                   help="BMv2's log level (its log goes to the run directory; default off)")
    p.set_defaults(func=cmd_ptf)


# -- dcnlab lab DIR --ptf SWITCH -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class LabPtf:
    """``--ptf SWITCH`` of ``dcnlab lab``, checked before the lab comes up."""

    switch: str
    tests: Path
    ports: tuple[int, ...] | None
    keep_pipeline: bool
    params: str | None
    words: tuple[str, ...]


def _port_list(text: str) -> tuple[int, ...]:
    from dcnlab.topos.numbers import parse_uint      # ASCII digits only: '١,٢' is no list of ports

    try:
        ports = tuple(parse_uint(x.strip()) for x in text.split(",") if x.strip())
    except ValueError:
        ports = ()
    if not ports or any(not 0 <= p < 511 for p in ports):
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of port numbers; valid: e.g. 0,1 (0 to 510)")
    return ports


def add_lab_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("PTF against one switch of the lab (pip install 'dcnlab[ptf]')")
    g.add_argument("--ptf", metavar="SWITCH",
                   help="after the --exec commands, run PTF tests against SWITCH with the lab's entries: its "
                        "host-facing ports (or --ptf-ports) are given to PTF for the run, grpcaddr is SWITCH's; "
                        "the exit status is PTF's")
    g.add_argument("--tests", metavar="DIR", help="the PTF tests for --ptf (default: DIR/ptf)")
    g.add_argument("--ptf-ports", type=_port_list, metavar="P,P,...",
                   help="the ports of SWITCH that PTF takes over (default: those facing hosts)")
    g.add_argument("--keep-pipeline", action="store_true",
                   help="pass the test parameter keep_pipeline=True: a test that honours it pushes no pipeline, "
                        "so the switch keeps the lab's program and entries")
    g.add_argument("--test-params", metavar="'K=V;...'", help="more PTF test parameters, after dcnlab's")
    g.add_argument("--ptf-args", metavar="'ARGS'", help="PTF's own options and test names, as one string")


def check_lab_ptf(args: argparse.Namespace, lab: Lab) -> LabPtf | None:
    """The ``--ptf`` options, checked against the lab (nothing is created); None without ``--ptf``."""
    from dcnlab.emu.ptf import check_passthrough, check_test_params, check_tests, choose_ports, ptf_script

    given = [o for o, v in (("--tests", args.tests), ("--ptf-ports", args.ptf_ports), ("--test-params",
             args.test_params), ("--ptf-args", args.ptf_args), ("--keep-pipeline", args.keep_pipeline or None))
             if v is not None]
    if args.ptf is None:
        if given:
            raise UserError(f"argument {given[0]}: only with --ptf SWITCH")
        return None
    ptf_script()
    switches = [n.name for n in lab.fabric.forwarding_nodes()]
    if args.ptf not in switches:
        raise UserError(f"argument --ptf: {args.ptf!r} is not a switch of {lab.rel(lab.topology)}; valid: "
                        f"{', '.join(switches)}")
    if args.tests is None and not (lab.dir / "ptf").is_dir():
        raise UserError(f"argument --ptf: {lab.dir} has no ptf/ directory of tests; give one with --tests DIR")
    tests = check_tests(args.tests if args.tests is not None else lab.dir / "ptf")
    try:
        split = shlex.split(args.ptf_args or "")
    except ValueError as e:             # shlex: an unclosed quote
        raise UserError(f"argument --ptf-args: {args.ptf_args[:200]!r} cannot be split into words ({e})") from None
    words = check_passthrough(split, "argument --ptf-args", "--ptf-ports, --tests, --test-params")
    params = check_test_params(args.test_params)
    choose_ports(lab.fabric, args.ptf, args.ptf_ports)     # the topology gives each switch's ports
    return LabPtf(args.ptf, tests, args.ptf_ports, args.keep_pipeline, params, tuple(words))


def run_lab_ptf(net: FabricNetwork, plan: LabPtf, say: Callable[[str], None]) -> int:
    from dcnlab.emu.ptf import ptf_in_fabric

    rc = ptf_in_fabric(net, plan.switch, plan.tests, plan.ports, plan.keep_pipeline, plan.params, plan.words,
                       say=say)
    say(f"PTF exited with status {rc}; {plan.switch}'s ports are back on their links")
    return rc
