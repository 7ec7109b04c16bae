"""Run the ``dcnlab`` CLI as user nobody, wherever the checkout lives.

The child process starts as the test's user, imports the CLI, every module of the packages above the API (:data:`PACKAGES`) and the
modules the handlers import lazily (the checkout may be unreadable for nobody, e.g. under ``/root``
with mode 0700), then drops to uid/gid 65534 and only then calls :func:`dcnlab.cli.main`. When the tests themselves do not
run as root, there is nothing to drop: the CLI simply runs as the current user.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence

NOBODY = 65534

#: The packages whose modules the child imports, every one (the CLI and what its commands run).
PACKAGES = ("dcnlab.cli", "dcnlab.bench", "dcnlab.report", "dcnlab.reproduce", "dcnlab.sweep", "dcnlab.figures",
            "dcnlab.results")

#: Modules outside :data:`PACKAGES` that command handlers import lazily (``dcnlab run``: the emulation,
#: the spec parser, the counters; every emulating handler: the preflight's toolchain lookup).
PRELOAD = ("dcnlab.controller.runtime.errors", "dcnlab.controller.runtime.toolchain", "dcnlab.emu.network", "dcnlab.emu.preflight",
           "dcnlab.topos.spec", "dcnlab.traffic.measure")

_CHILD = f"""\
import importlib, os, pkgutil, sys
from dcnlab.cli import build_parser, main
build_parser()
for p in {PACKAGES!r}:
    pkg = importlib.import_module(p)
    for m in pkgutil.walk_packages(pkg.__path__, p + "."):
        importlib.import_module(m.name)
for m in {PRELOAD!r}:
    importlib.import_module(m)
import encodings.ascii   # the codec of /proc files, loaded on first use: pyenv's stdlib is under a 0700 /root too
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
