"""Errors the CLI reports as one line, without a traceback."""


class UserError(Exception):
    """Something the user can fix (bad option, missing tool, too-large request)."""
