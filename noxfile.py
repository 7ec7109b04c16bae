"""The test suite without BMv2 and p4c under every Python that dcnlab supports (nox sessions).

    .venv/bin/nox                              # every session whose Python is installed; the others are skipped
    .venv/bin/nox -s tests-3.10                # one Python
    .venv/bin/nox -s tests-3.12 -- tests/test_routing.py -x -q     # pytest's arguments after --

Each session makes a venv of its own under .nox/, installs dcnlab there with its test extra (and
setuptools, which provides the distutils that Mininet imports on Python 3.12 and later), and exposes
Debian's mininet module to it as ./setup does for .venv: ``/usr/bin/python3 -E setup-venv VENV mininet``
on the venv nox made, which links only that package (pure Python) into the venv, none of the system's
other site directories. Then it runs pytest on the tests that need neither p4c nor BMv2 (``-m "not bmv2
and not p4c"``); arguments after ``--`` replace that marker selection. The netns tests need root, as
with .venv.

PYTHONS is the supported range; tests/test_python_versions.py checks it against pyproject.toml's
requires-python and classifiers.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import nox

PYTHONS = ["3.10", "3.11", "3.12", "3.13"]
SYSTEM_PYTHON = "/usr/bin/python3"      # the interpreter Debian's (or Ubuntu's) python3-mininet belongs to
ROOT = Path(__file__).resolve().parent

nox.options.sessions = ["tests"]


def expose_mininet(session: nox.Session) -> None:
    """Debian's mininet, linked into the session's venv by setup-venv (the same logic as ./setup's .venv)."""
    probe = subprocess.run([SYSTEM_PYTHON, "-E", "-c", "import mininet"], capture_output=True, text=True, check=False) \
        if os.access(SYSTEM_PYTHON, os.X_OK) else None
    if probe is None or probe.returncode != 0:
        session.error(f"{SYSTEM_PYTHON} cannot import mininet: install Debian's mininet package "
                      "(apt-get install mininet, or ./setup), whose module the sessions share")
    session.run_install(SYSTEM_PYTHON, "-E", str(ROOT / "setup-venv"), session.virtualenv.location, "mininet",
                        external=True)


@nox.session(python=PYTHONS)
def tests(session: nox.Session) -> None:
    """pytest -m "not bmv2 and not p4c" with dcnlab[test] installed (editable) in this Python's venv."""
    session.install("-e", ".[test]", "setuptools")
    expose_mininet(session)
    args = session.posargs or ["-m", "not bmv2 and not p4c"]
    session.run("python", "-m", "pytest", *args)
