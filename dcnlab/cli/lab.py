"""``dcnlab lab DIR``: an exercise directory in the p4lang tutorials' layout, brought up as its ``make run`` does.

What is read from DIR, before anything is created (each problem is one line, exit status 2):

- the topology: the ``Makefile``'s ``TOPO = PATH`` (also ``?=``, ``:=``, ``::=``; ``$(VAR)`` of a
  variable set earlier in the same Makefile is expanded), else ``topology.json``; relative paths in
  it are looked up in DIR first, where the tutorials' scripts run, then beside the file;
- the program: ``--program FILE``, else the Makefile's ``DEFAULT_PROG``, else the one ``*.p4`` at
  DIR's root (none or several: an error that lists them and asks for ``--program``).

Then, after the one-line check of root and the toolchain: the program is compiled through the
content-keyed cache and copied to where the exercise's own scripts look for it,
``DIR/build/<name>.json`` and ``DIR/build/<name>.p4.p4info.txtpb`` (and ``DIR/logs/`` is created); the fabric comes up with every
switch's runtime JSON (or CLI commands), every host on ``eth0`` with the file's IP and MAC and its
``commands`` run, host shells in DIR. With ``--grpc-tcp`` switch ``i`` of the topology file (device id
``i``) serves P4Runtime on ``127.0.0.1:50051+i``, where the tutorials put it.

Then the ``--exec 'HOST COMMAND'`` commands, in order, each in its host's namespace with DIR as the
working directory; a trailing ``&`` runs one in the background until the lab goes down. Each command's
output is printed under a header naming host and command; the exit status is 1 if a foreground command
failed. Without ``--exec`` (or with ``--cli``) the Mininet CLI opens. Teardown as for ``dcnlab run``,
also on Ctrl-C, SIGTERM and errors.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from typing import TYPE_CHECKING

from dcnlab.cli.errors import UserError
from dcnlab.cli.ptf import add_lab_arguments, check_lab_ptf, run_lab_ptf
from dcnlab.emu.lab import build, in_lab, load_lab
from dcnlab.emu.lab_exec import ExecRunner, check_execs

if TYPE_CHECKING:
    pass


# -- the directory --------------------------------------------------------------------------------------


# -- --exec -----------------------------------------------------------------------------------------------


# -- the command -----------------------------------------------------------------------------------------
def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def cmd_lab(args: argparse.Namespace) -> int:
    from dcnlab.cli.run import net_options, print_endpoints, require_root
    from dcnlab.controller.runtime.errors import RuntimeErrorBase
    from dcnlab.emu.network import FabricNetwork

    lab = load_lab(args.dir, args.program)
    execs = check_execs(args.exec or [], lab)
    ptf = check_lab_ptf(args, lab)          # --ptf SWITCH: PTF installed, the switch, the tests
    opts = net_options(args)
    say = (lambda m: print(f"  {m}", file=sys.stderr, flush=True))
    net = FabricNetwork(lab.fabric, opts, progress=say, program=lab.program)    # checks the size; creates nothing
    require_root("dcnlab lab")      # root and every binary, before anything is compiled or created
    old_term = signal.signal(signal.SIGTERM, _raise_interrupt)
    runner: ExecRunner | None = None
    view = None
    try:
        with in_lab(lab):
            t = time.perf_counter()
            build(lab)
            built = time.perf_counter() - t
            net.start()
            if args.view is not None:    # the live view (dcnlab.view), closed before the teardown
                from dcnlab.view import for_network
                view = for_network(net, args.view, say)
            up = built + net.timings.total()
            print(f"lab {lab.dir}: {lab.rel(lab.topology)}, program {lab.rel(lab.program)} -> "
                  f"{lab.rel(lab.build_json)}, {lab.rel(lab.build_p4info)}")
            print(f"{len(net.switches)} BMv2 switches, {len(net.hosts)} hosts, up in {up:.2f} s (build {built:.2f}, "
                  + ", ".join(f"{k} {v:.2f}" for k, v in net.timings.phases.items()) + ")")
            print(f"run directory: {net.run.path}")
            if not opts.controller or opts.grpc_tcp is not None:
                print_endpoints(net)
            sys.stdout.flush()
            runner = ExecRunner(net, lab.dir)
            for e in execs:
                runner.run(e)
            ptf_rc = run_lab_ptf(net, ptf, say) if ptf is not None else 0
            if args.hold:
                say(f"holding the lab up for {args.hold:g} s")
                time.sleep(args.hold)
            if args.cli or (not execs and not args.hold and ptf is None):
                from mininet.cli import CLI
                CLI(net.mn)
            runner.stop()
            net.check_switches()
        if runner.failed:
            print(f"dcnlab lab: {len(runner.failed)} of {sum(not e.background for e in execs)} foreground "
                  f"command(s) failed: " + "; ".join(f"{e.host}: {e.command} (exit status {rc})"
                                                      for e, rc in runner.failed), file=sys.stderr)
            return 1
        return ptf_rc
    except RuntimeErrorBase as e:
        raise UserError(str(e)) from None
    finally:
        try:
            if view is not None:
                view.close()
            if runner is not None:
                runner.stop()
        finally:
            try:
                net.stop()
                if net.run is not None:     # bring-up created something: it was torn down
                    say(f"torn down in {net.timings.phases.get('teardown', 0):.2f} s")
            finally:
                signal.signal(signal.SIGTERM, old_term)


def add_parser(sub: argparse._SubParsersAction) -> None:
    from dcnlab.cli.argtypes import ranged
    from dcnlab.cli.run import add_controller_arguments, add_net_arguments
    from dcnlab.emu.options import RANGES

    p = sub.add_parser("lab", help="bring up a p4lang-tutorials-style exercise directory, as its `make run` does",
                       description="Bring up an exercise directory the way the p4lang tutorials' `make run` does: "
                       "the topology named by its Makefile (TOPO = ...; default topology.json), the P4 program at "
                       "its root compiled to build/<name>.json and build/<name>.p4.p4info.txtpb, each switch's "
                       "runtime JSON, each host's commands, hosts on eth0 with the file's IP and MAC. Then the "
                       "Mininet CLI, or the --exec commands.")
    p.add_argument("dir", metavar="DIR", help="the exercise directory")
    p.add_argument("--program", metavar="FILE.p4",
                   help="the program for every switch (default: the Makefile's DEFAULT_PROG, else the one *.p4 "
                        "at DIR's root)")
    p.add_argument("--exec", action="append", metavar="'HOST COMMAND'",
                   help="run COMMAND in HOST (repeatable, in order) with DIR as working directory and dcnlab's "
                        "Python first on PATH, printing its output under a header; a trailing & runs it in the "
                        "background until the lab goes down. Exit status 1 if a foreground command fails. "
                        "Without --exec the Mininet CLI opens")
    add_controller_arguments(p)
    for a in p._actions:
        if a.dest == "no_controller":
            a.help = ("push the pipeline and the topology's entries, then step down so that your own controller "
                      "(e.g. the exercise's, with --grpc-tcp) becomes primary")
    p.add_argument("--cli", action="store_true", help="open the Mininet CLI after the --exec commands")
    p.add_argument("--hold", type=ranged(*RANGES["--hold"]), metavar="SECONDS",
                   help="keep the lab up this long after the --exec commands (without --exec: instead of the CLI)")
    add_lab_arguments(p)
    add_net_arguments(p)
    from dcnlab.view import add_view_option
    add_view_option(p, "the lab while it runs")
    p.set_defaults(func=cmd_lab)
