"""Errors of the CIST mechanism that the user can fix (bad parameters, inputs that name no switch)."""

from __future__ import annotations

from dcnlab.topos.errors import UserError


class CistError(UserError):
    """No completely independent spanning trees can be built (or checked) for the given input.

    The message names the parameter and the values for which the construction works."""
