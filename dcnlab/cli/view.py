"""``dcnlab view RUN_DIR``: the live view (:mod:`dcnlab.view`) of a run another dcnlab process keeps up."""

from __future__ import annotations

import argparse


def cmd_view(args: argparse.Namespace) -> int:
    from dcnlab import view
    from dcnlab.cli.run import require_root
    from dcnlab.view.attach import run_source

    source = run_source(args.run_dir)       # one line if it is not a live run's directory
    try:
        require_root("dcnlab view", tools=())    # the run directory, its sockets and namespace are root's
    except BaseException:
        source.close()                            # its samplers stop with the refusal
        raise
    server = view.start(source, args.port)
    try:
        view.wait()           # Ctrl-C: 130 through the CLI's handler, as for plan --view
    finally:
        server.close()
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    from dcnlab.view import view_dir_port
    p = sub.add_parser("view", help="serve a live view of a running fabric (its run directory) on 127.0.0.1")
    p.add_argument("run_dir", metavar="RUN_DIR", help="the run directory 'dcnlab run' printed "
                                                      "(/var/tmp/dcnlab/runs/...)")
    p.add_argument("--port", type=view_dir_port, help="port on 127.0.0.1 (default: a free one)")
    p.set_defaults(func=cmd_view)
