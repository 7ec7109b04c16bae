"""Errors the CLI reports as one line, without a traceback (defined in :mod:`dcnlab.topos.errors`)."""

from dcnlab.topos.errors import UserError

__all__ = ["UserError"]
