"""Children that a test interrupts with SIGINT, as Ctrl-C at a terminal would.

A shell starts background jobs with SIGINT ignored (POSIX: non-interactive shells, ``cmd &``), so a test
runner started that way (a CI script, ``nohup pytest ... &``) runs with SIGINT ignored, every child inherits
that, and Python leaves an ignored SIGINT ignored: the child never sees the test's SIGINT and the test
hangs until its guard fires. :func:`popen` puts SIGINT back to its default in the child,
as a terminal's foreground job has it; ``tests/test_interrupts.py`` checks it from an ignoring parent."""

from __future__ import annotations

import signal
import subprocess
import sys
from typing import Any


def sigint_default() -> None:
    """The signals a test sends at their defaults in the child, whatever the test run inherited (a suite started
    under ``nohup`` ignores SIGHUP, and dcnlab rightly keeps an ignored SIGHUP ignored)."""
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)


def popen(*argv: str, **kw: Any) -> subprocess.Popen:
    """``python -m dcnlab ARGV`` with SIGINT at its default, stdout and stderr piped as text."""
    return subprocess.Popen([sys.executable, "-m", "dcnlab", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=sigint_default, **kw)
