"""Run the ``dcnlab`` CLI as user nobody, wherever the checkout lives.

The child process starts as the test's user, imports the CLI, every ``experiments`` module and the
modules the handlers import lazily (the checkout may be unreadable for nobody, e.g. under ``/root``
with mode 0700), then drops to uid/gid 65534 and only then calls :func:`dcnlab.experiments.cli.main`. When the tests themselves do not
run as root, there is nothing to drop: the CLI simply runs as the current user.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence

NOBODY = 65534

#: Modules outside ``experiments`` that command handlers import lazily (``dcnlab run``: the emulation,
#: the spec parser, the counters; every emulating handler: the preflight's toolchain lookup).
PRELOAD = ("dcnlab.controller.runtime.errors", "dcnlab.controller.runtime.toolchain", "dcnlab.emu.network", "dcnlab.experiments.preflight",
           "dcnlab.topos.spec", "dcnlab.traffic.measure")

_CHILD = f"""\
import importlib, os, pkgutil, sys
from dcnlab import experiments
from dcnlab.experiments.cli import build_parser, main
build_parser()
for m in pkgutil.iter_modules(experiments.__path__, "dcnlab.experiments."):
    if m.name != "dcnlab.experiments.__main__":
        importlib.import_module(m.name)
for m in {PRELOAD!r}:
    importlib.import_module(m)
if os.geteuid() == 0:
    os.setgroups([])
    os.setgid({NOBODY})
    os.setuid({NOBODY})
raise SystemExit(main(sys.argv[1:]))
"""


def run_cli_as_nobody(argv: Sequence[str], env: dict[str, str] | None = None,
                      timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``dcnlab ARGV`` as nobody (or as the current non-root user), from ``/``; output captured as text."""
    return subprocess.run([sys.executable, "-c", _CHILD, *argv], capture_output=True, text=True,
                          env=env if env is not None else dict(os.environ), cwd="/", timeout=timeout)
