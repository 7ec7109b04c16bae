"""Lets ``python -m pytest examples/plugins`` (and dcnlab's own test command, whose ``testpaths`` include these
tests) import the example package without installing it; ``pip install -e examples/plugins`` then adds only
the entry points, which the tests that need them check for and skip without."""

import sys
from pathlib import Path

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)
