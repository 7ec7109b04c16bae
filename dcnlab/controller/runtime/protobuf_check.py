"""Fail with one line, not a traceback from deep inside finsy, when ``google.protobuf`` cannot be imported.

PI's ``make install`` and p4lang's packages install a regular package ``google`` (an empty
``google/__init__.py``, beside ``google/rpc`` and ``p4``). Wherever it is on ``sys.path``, it hides
every portion of the ``google`` namespace package, protobuf's included. ``./setup`` makes a venv
that does not see the system's site directories (see ``setup-venv``), but a ``PYTHONPATH`` or a venv
made by hand can still put one in front. The runtime package checks this before its first protobuf
import; importing ``google.protobuf`` alone is cheap (its ``__init__`` holds only the version).
"""

from __future__ import annotations

import os
import sys

from dcnlab.topos.errors import UserError


class ProtobufUnavailable(UserError, ImportError):
    """``google.protobuf`` cannot be imported; the message names the file that hides it, if one does."""


def require_protobuf() -> None:
    try:
        import google.protobuf  # noqa: F401
    except ImportError as e:
        raise ProtobufUnavailable(_why(e)) from None


def _why(err: ImportError) -> str:
    init = getattr(sys.modules.get("google"), "__file__", None)      # a namespace package has none
    if init and not os.path.isdir(os.path.join(os.path.dirname(init), "protobuf")):
        site = os.path.dirname(os.path.dirname(init))
        return (f"{init!r} makes 'google' a regular package (PI's make install and p4lang's packages put it "
                f"there), which hides google.protobuf: run ./setup again (its venv sees none of the system's "
                f"site-packages but Mininet) and keep {site!r} off PYTHONPATH")
    return f"{sys.executable} cannot import google.protobuf ({err}); run ./setup, or pip install protobuf"
