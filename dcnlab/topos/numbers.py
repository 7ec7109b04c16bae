"""Strict numbers from user text: only ASCII digits count as digits.

Python's ``int()`` and ``float()`` accept far more than a user means by a number: other scripts'
digits (``int("٤") == 4``), superscripts that ``str.isdigit`` calls digits but ``int`` refuses
(``"²"``), underscores (``int("4_0") == 40``), surrounding blanks and, for floats, ``nan`` and
``inf``. Every place where dcnlab turns user text (a fabric parameter, a node name, an option) into
a number goes through this module, so ``k=٤`` and ``k=4_0`` are errors, not 4 and 40.
"""

from __future__ import annotations

import re

MAX_DIGITS = 100
"""Longer digit strings are refused before conversion (``int()`` of 5,000 digits raises, and nothing
dcnlab counts comes near 10^100)."""

UINT = re.compile(r"[0-9]+")
INT = re.compile(r"-?[0-9]+")
FLOAT = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")


def parse_uint(text: str) -> int:
    """``text`` as a non-negative integer of ASCII digits; ``ValueError`` otherwise."""
    if not UINT.fullmatch(text) or len(text) > MAX_DIGITS:
        raise ValueError(f"{text!r} is not a non-negative integer (ASCII digits 0-9)")
    return int(text)


def parse_int(text: str) -> int:
    """``text`` as an integer: an optional ``-`` and ASCII digits; ``ValueError`` otherwise."""
    if not INT.fullmatch(text) or len(text) > MAX_DIGITS:
        raise ValueError(f"{text!r} is not an integer (ASCII digits 0-9)")
    return int(text)


def parse_float(text: str) -> float:
    """``text`` as a finite decimal number (``1``, ``-0.5``, ``2e-3``); ``ValueError`` otherwise.

    ``nan``, ``inf``, underscores, blanks and non-ASCII digits are refused, and so is a number too
    large for a float (``1e400``)."""
    if not FLOAT.fullmatch(text) or len(text) > MAX_DIGITS:
        raise ValueError(f"{text!r} is not a number (ASCII digits, e.g. 1.5 or 2e-3)")
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text!r} is too large for a number")
    return value
