"""``dcnlab run SPEC`` and ``dcnlab clean`` (``dcnlab compile``: :mod:`dcnlab.cli.compile`)."""

from __future__ import annotations

import argparse
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from dcnlab.cli.argtypes import one_line, ranged
from dcnlab.cli.errors import UserError
from dcnlab.emu import preflight
from dcnlab.emu.lab import NOT_P4


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def net_options(args: argparse.Namespace):
    """NetOptions from the network arguments, validated (a clear error names a bad option)."""
    from dcnlab.emu.options import NetOptions
    opts = NetOptions(bw_mbps=args.bw, delay=args.delay, max_queue=args.max_queue,
                      queue_rate_pps=args.queue_rate, queue_depth=args.queue_depth, log_level=args.log_level,
                      pcap=args.pcap, grpc_log=args.grpc_log, ecmp=not args.no_ecmp, start_timeout=args.timeout,
                      watch=args.watch, agents=False,    # the all-pairs check needs no agents
                      controller=not getattr(args, "no_controller", False), grpc_tcp=getattr(args, "grpc_tcp", None))
    opts.validate()
    return opts


def require_root(what: str = "dcnlab run", tools: Sequence[str] = preflight.EMULATION_TOOLS) -> None:
    """Refuse in one line, before anything is created, unless root and the P4 ``tools`` are here.

    Every command that emulates calls it first (``dcnlab clean`` with ``tools=()``: root only); it is
    :func:`dcnlab.emu.preflight.require` with root required.
    """
    preflight.require(what, tools, root=True)


def check_program(given: str | None) -> Path | None:
    """``--program FILE.p4`` as an absolute path: a readable regular file named ``*.p4``; else one line
    saying what it is (missing, a directory, a FIFO, ...)."""
    from dcnlab.topos.inputs import file_problem, quote

    if given is None:
        return None
    program = Path(given).absolute()
    why = file_problem(program) or (None if program.suffix == ".p4" else NOT_P4)
    if why is not None:
        raise UserError(f"argument --program: {quote(given, 200)} {why}; valid: an existing P4 source FILE.p4")
    return program


def check_routable(fabric) -> None:
    """dcnlab's own program needs dcnlab's routes, and dcnlab routes only its four families: a fabric
    from a file of any other kind (``custom``, a tutorials or p4app file, or a built-in family whose
    graph the file changed) needs a program of the user's, said in one line before any work."""
    from dcnlab.controller.routing import ROUTERS
    from dcnlab.topos.inputs import escape, quote

    if fabric.kind in ROUTERS:
        return
    declared, fmt = getattr(fabric, "declared", None), getattr(fabric, "format", None)
    what = (f"names {declared} but its nodes, links or hosts are not {declared}'s" if declared else
            f"is a {'p4lang tutorials' if fmt == 'tutorials' else 'p4-utils p4app'} topology that names no program"
            if fmt in ("tutorials", "p4app") else
            f"is of kind {quote(fabric.kind, 30)}, not one of dcnlab's families ({', '.join(ROUTERS)})")
    raise UserError(f"{escape(fabric.spec)}: the fabric {what}, so dcnlab cannot route it with its own program: it "
                    f"needs a program: give --program FILE.p4 or a program in the file (per switch or top-level)")


def cmd_run(args: argparse.Namespace) -> int:
    from dcnlab.controller.runtime.errors import RuntimeErrorBase
    from dcnlab.emu.network import FabricNetwork
    from dcnlab.emu.reachability import deadline_for
    from dcnlab.topos.files import load_topology, looks_like_file
    from dcnlab.topos.spec import parse_spec
    from dcnlab.traffic import measure

    # relative paths in the file: from the working directory first, as the tutorials' `make run` has them
    fabric = load_topology(args.spec, base=Path.cwd()) if looks_like_file(args.spec) else parse_spec(args.spec)
    program = check_program(args.program)
    opts = net_options(args)
    say = (lambda m: print(f"  {m}", file=sys.stderr, flush=True))
    if getattr(args, "servers", None) and getattr(args, "view", None) is not None:
        raise UserError("argument --view: not with --servers (a fabric over several machines); valid: one machine")
    if getattr(args, "servers", None):      # several machines: prints the placement; creates nothing
        from dcnlab.cli import cluster as cluster_cmd
        net = cluster_cmd.cluster_network(args, fabric, opts, say, program)
    else:
        net = FabricNetwork(fabric, opts, progress=say, program=program)     # checks the size; creates nothing
    # dcnlab's program under dcnlab's controller: routes, all-pairs check and port counters as always
    own = not net.programs and opts.controller
    if own:
        check_routable(fabric)
    check = args.check or ("all-pairs" if own else None)
    if check in ("rules", "both") and not own:
        raise UserError(f"argument --check {check}: the rules check compares every switch's tables with dcnlab's "
                        "routes, so it needs dcnlab's program under dcnlab's controller; valid here: --check "
                        "all-pairs (or --check)")
    require_root()      # root and every binary, before anything is compiled or created
    signal.signal(signal.SIGTERM, _raise_interrupt)
    view = None
    try:
        net.start()
        if getattr(args, "view", None) is not None:     # the live view (dcnlab.view) until teardown
            from dcnlab import view as view_mod
            view = view_mod.for_network(net, args.view, say)
        before = measure.snapshot(net.controller) if own else None
        n = len(net.hosts)
        reach = net.reachability(deadline=deadline_for(n * (n - 1))) if check in ("all-pairs", "both") else None
        rules = None
        if check in ("rules", "both"):
            from dcnlab.emu.rulecheck import check_rules
            rules = check_rules(net)
        after = measure.snapshot(net.controller) if own else None
        missing = reach.unreachable if reach is not None else []
        distinct = sorted({str(p) for p in net.programs.values()})
        what = ("dcnlab's program" if not distinct else f"program {distinct[0]}" if len(distinct) == 1
                else f"{len(distinct)} programs: {', '.join(Path(p).name for p in distinct)}")
        print(f"fabric {fabric.spec}: {len(net.switches)} BMv2 switches ({what}), {len(net.hosts)} hosts, up in "
              f"{net.timings.total():.2f} s (" + ", ".join(f"{k} {v:.2f}" for k, v in net.timings.phases.items())
              + ")")
        if reach is not None or rules is None:
            print(reach.summary() if reach is not None else
                  "all-pairs check: off with a program of your own or --no-controller (--check)")
        if rules is not None:
            print(rules.summary())
        for src, dst in missing[:20]:
            print(f"  unreachable: {src} -> {dst}")
        if before is not None and after is not None:
            print("per-link counters during the probes (bytes a->b / b->a, packets):")
            for ll in measure.link_loads(fabric, after - before):
                if ll.a_to_b.packets or ll.b_to_a.packets:
                    l = ll.link
                    print(f"  {l.a}:{l.a_port:<3} -- {l.b}:{l.b_port:<3} {ll.a_to_b.bytes:>8} / "
                          f"{ll.b_to_a.bytes:<8} ({ll.a_to_b.packets}/{ll.b_to_a.packets} pkts)")
            if getattr(args, "servers", None):
                cluster_cmd.print_tunnel_traffic(net, after - before)
        print(f"run directory: {net.run.path}")
        if not opts.controller or opts.grpc_tcp is not None:
            print_endpoints(net)
        if not opts.controller and not args.hold and not args.cli:
            say("dcnlab stepped down; the switches are your controller's. Ctrl-C tears the fabric down")
            wait_for_interrupt()
        if view is not None and opts.controller and not args.hold and not args.cli:
            say("serving the view; Ctrl-C tears the fabric down")
            wait_for_interrupt()
        if args.hold:
            say(f"holding the fabric up for {args.hold:g} s")
            time.sleep(args.hold)
        if args.cli:
            from mininet.cli import CLI
            CLI(net.mn)
        net.check_switches()
        return 0 if not missing and (rules is None or rules.ok) else 1
    except RuntimeErrorBase as e:
        raise UserError(str(e)) from None
    finally:
        if view is not None:
            view.close()
        net.stop()
        if net.run is not None:     # bring-up created something (its run directory first): it was torn down
            say(f"torn down in {net.timings.phases.get('teardown', 0):.2f} s")


def print_endpoints(net) -> None:
    """The switches' P4Runtime endpoints (also in ``<run>/endpoints.json``)."""
    from dcnlab.emu import netns

    role = "dcnlab is primary" if net.opts.controller else "dcnlab stepped down: no primary until yours arbitrates"
    print(f"P4Runtime endpoints ({role}; {net.run.path / 'endpoints.json'}):")
    for e in net.endpoints():
        print(f"  {e.switch:<10} device_id {e.device_id:<3} {e.grpc_tcp or e.grpc}"
              f"   thrift: nsenter --net={netns.path(e.netns)} simple_switch_CLI --thrift-port {e.thrift_port}")


def wait_for_interrupt() -> None:
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass


def cmd_clean(args: argparse.Namespace) -> int:
    from dcnlab.emu.cleanup import clean
    require_root("dcnlab clean", tools=())
    r = clean(force=args.force)
    print(f"cleaned {len(r.runs)} run(s): {r.killed} process(es), {r.namespaces} network namespace(s)")
    for why in r.remote_failed:
        print(f"  could not clean on another machine: {why} (the run stays unfinished; clean again)")
    for name in r.skipped_live:
        print(f"  skipped live run {name} (its dcnlab process is still running; --force to clean it)")
    for name, why in r.damaged:
        print(f"dcnlab: warning: clean: skipped run {name}: {one_line(why)} (fix or remove that directory; the "
              f"other runs were cleaned)", file=sys.stderr)
    return 1 if r.damaged else 0


def add_net_arguments(p: argparse.ArgumentParser) -> None:
    from dcnlab.emu.options import LOG_LEVELS, RANGES

    def typ(opt: str):
        return ranged(*RANGES[opt])

    g = p.add_argument_group("network")
    g.add_argument("--bw", type=typ("--bw"), help="link rate in Mbit/s (tc)")
    g.add_argument("--delay", help="link delay, e.g. 1ms (netem)")
    g.add_argument("--max-queue", type=typ("--max-queue"), help="tc queue limit in packets")
    g.add_argument("--queue-rate", type=typ("--queue-rate"), help="BMv2 egress queue rate, packets/s, every port")
    g.add_argument("--queue-depth", type=typ("--queue-depth"), help="BMv2 egress queue depth, packets, every port")
    g.add_argument("--log-level", default="off", choices=LOG_LEVELS,
                   help="BMv2 log level (logs in the run directory)")
    g.add_argument("--pcap", action="store_true", help="per-port pcaps in the run directory")
    g.add_argument("--grpc-log", action="store_true", help="log every P4Runtime request in the run directory")
    g.add_argument("--watch", action="store_true",
                   help="restart a switch that dies and re-push its pipeline and state")
    g.add_argument("--no-ecmp", action="store_true", help="install primary paths only")
    g.add_argument("--timeout", type=typ("--timeout"), default=30.0, help="switch start timeout, seconds")


def add_controller_arguments(p: argparse.ArgumentParser, default_port: int | None = None) -> None:
    from dcnlab.emu.loopback import TUTORIAL_BASE_PORT
    p.add_argument("--no-controller", action="store_true",
                   help="push the pipeline (and the topology file's entries), then step down so that your own "
                        "controller becomes primary; dcnlab installs no routes. Without --hold or --cli the "
                        "fabric stays up until Ctrl-C")
    p.add_argument("--grpc-tcp", nargs="?", const=TUTORIAL_BASE_PORT, type=ranged(int, 1024, 65535 - 160),
                   metavar="PORT", help="also serve each switch's P4Runtime on 127.0.0.1:PORT, PORT+1, ... "
                   f"(default {TUTORIAL_BASE_PORT}, topology order), for controllers that cannot use a unix: "
                   "target; any local user can then reach the switches")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="bring a fabric up in BMv2+Mininet, route it, verify all-pairs reachability")
    p.add_argument("spec", metavar="TOPOLOGY", help="a fabric spec (e.g. fattree:k=4) or a topology file: dcnlab's "
                   "JSON export, the p4lang tutorials' topology.json or p4-utils' p4app.json")
    p.add_argument("--program", metavar="FILE.p4", help="your own v1model program for every switch (default: the "
                   "topology file's, else dcnlab's, which routes only bcube, fattree, midplane and dragonfly fabrics: "
                   "a topology file of any other fabric needs a program); dcnlab then installs no routes of its own")
    p.add_argument("--check", nargs="?", const="all-pairs", choices=("all-pairs", "rules", "both"),
                   help="which check to run: all-pairs (one probe per ordered host pair; the default with "
                        "dcnlab's program, and what a bare --check runs with your own program or "
                        "--no-controller), rules (read every switch's tables back, compare with dcnlab's routes, "
                        "and send the fewest probes that exercise every entry and ECMP member, after ATPG; "
                        "dcnlab's program only) or both")
    add_controller_arguments(p)
    from dcnlab.cli.cluster import add_run_arguments
    add_run_arguments(p)
    p.add_argument("--cli", action="store_true", help="open the Mininet CLI before teardown")
    from dcnlab.emu.options import RANGES
    p.add_argument("--hold", type=ranged(*RANGES["--hold"]), metavar="SECONDS",
                   help="keep the fabric up this long after the check")
    add_net_arguments(p)
    from dcnlab.view import add_view_option
    add_view_option(p, "the running fabric (until Ctrl-C, --hold or --cli ends it)")
    p.set_defaults(func=cmd_run)
    from dcnlab.cli import compile as compile_cmd
    compile_cmd.add_parser(sub)
    c = sub.add_parser("clean", help="stop the processes and delete the namespaces left by crashed dcnlab runs")
    c.add_argument("--force", action="store_true", help="also clean runs whose dcnlab process is still alive")
    c.set_defaults(func=cmd_clean)
