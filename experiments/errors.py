"""Errors the CLI reports as one line, without a traceback (defined in :mod:`topos.errors`)."""

from topos.errors import UserError

__all__ = ["UserError"]
