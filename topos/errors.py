"""Errors raised for bad fabric parameters and specs."""

from __future__ import annotations


class SpecError(ValueError):
    """A fabric spec or parameter is invalid. The message names the parameter and its valid range."""


def check_range(fabric: str, name: str, value: int, lo: int, hi: int | None = None, why: str = "") -> None:
    """Raise :class:`SpecError` unless ``lo <= value <= hi``."""
    if value < lo or (hi is not None and value > hi):
        rng = f"{lo} <= {name}" + (f" <= {hi}" if hi is not None else "")
        extra = f" ({why})" if why else ""
        raise SpecError(f"{fabric}: parameter {name}={value} is out of range; valid: {rng}{extra}")
