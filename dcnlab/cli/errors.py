"""Errors the CLI reports as one line, without a traceback (defined in :mod:`dcnlab.topos.errors`), and the
exits that are dcnlab's own."""

from dcnlab.topos.errors import UserError

__all__ = ["ParserExit", "UserError"]


class ParserExit(SystemExit):
    """An exit of dcnlab's argument parser (``--help``, ``--version``, ``--algo list``: 0; a usage error: 2), as
    opposed to a ``SystemExit`` from a user's code, which :func:`dcnlab.cli.main` reports as an error."""
