"""Static checks as tests: pyflakes/bugbear rules (ruff) and type annotations (mypy)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ["dcnlab"]


def test_ruff():
    r = subprocess.run([sys.executable, "-m", "ruff", "check", "--select", "F,E9,B", "--ignore", "B008,B905",
                        *PACKAGES, "tests", "examples"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy():
    r = subprocess.run([sys.executable, "-m", "mypy", "--ignore-missing-imports", "--no-strict-optional",
                        "--cache-dir", str(ROOT / ".mypy_cache"), *PACKAGES], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
