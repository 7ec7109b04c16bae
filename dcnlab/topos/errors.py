"""Errors the user can fix: bad fabric parameters and specs, and the base class of all such errors."""

from __future__ import annotations


class UserError(Exception):
    """Something the user can fix: a bad option or parameter, a missing tool, a too-large request.

    The ``dcnlab`` CLI prints the message as one line (``dcnlab: error: ...``) and exits 2, without a
    traceback. It lives in the lowest layer so that every layer can raise it."""


class SpecError(UserError, ValueError):
    """A fabric spec or parameter is invalid. The message names the parameter and its valid range."""


def check_range(fabric: str, name: str, value: int, lo: int, hi: int | None = None, why: str = "") -> None:
    """Raise :class:`SpecError` unless ``lo <= value <= hi``."""
    if value < lo or (hi is not None and value > hi):
        rng = f"{lo} <= {name}" + (f" <= {hi}" if hi is not None else "")
        extra = f" ({why})" if why else ""
        raise SpecError(f"{fabric}: parameter {name}={value} is out of range; valid: {rng}{extra}")
