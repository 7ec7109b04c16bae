"""argparse pieces shared by every ``dcnlab`` command: one-line errors and ranged numbers.

Every bad option ends as one line, ``dcnlab <command>: error: argument --bw: ...``, that names
the option and its valid range, and exit status 2, like every other dcnlab error.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from typing import NoReturn


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (the usage stays available through --help)."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(2)


def ranged(kind: type, lo: float, hi: float, unit: str = "") -> Callable[[str], float]:
    """An argparse ``type=`` that accepts a ``kind`` (int or float) in ``lo..hi``."""
    what = "an integer" if kind is int else "a number"
    rng = f"{lo:g}..{hi:g}" + (f" {unit}" if unit else "")

    def convert(text: str) -> float:
        try:
            value = kind(text)
        except (TypeError, ValueError):
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}; valid: {rng}") from None
        if isinstance(value, float) and not math.isfinite(value) or not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"{text} is out of range; valid: {rng}")
        return value

    convert.__name__ = kind.__name__  # argparse names the type in some messages
    return convert
