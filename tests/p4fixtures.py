"""The base program's P4Info, as committed (tests/fixtures) so tests run without p4c.

``test_p4c.py`` checks that the committed copy equals what p4c produces from p4src/.
"""

from __future__ import annotations

from pathlib import Path

from dcnlab.controller.runtime.p4info import P4Info
from dcnlab.controller.runtime.pipeline import Pipeline

FIXTURE = Path(__file__).parent / "fixtures" / "dcnlab.p4info.txtpb"


def p4info() -> P4Info:
    return P4Info.from_file(FIXTURE)


def pipeline() -> Pipeline:
    return Pipeline(p4info(), b'{"fake": "bmv2 json"}')
