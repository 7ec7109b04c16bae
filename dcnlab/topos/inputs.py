"""Input files read with bounds: a size limit, and a clear error for deep nesting or bad encoding.

Any file a user names (a multicast groups file, a topology file) is read through :func:`read_json`:
``/dev/zero`` or a 3 GB file is refused after :data:`MAX_INPUT_BYTES`, not read into memory; a JSON
document nested 100,000 levels deep is an error, not a ``RecursionError``. Every failure is one
:class:`UserError` naming the file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dcnlab.topos.errors import UserError

MAX_INPUT_BYTES = 64 << 20
"""A user's input file is read up to this size (64 MiB)."""


def read_bytes(path: str | Path, what: str, max_bytes: int = MAX_INPUT_BYTES) -> bytes:
    """The content of ``path``, at most ``max_bytes``; :class:`UserError` ("``what`` 'PATH': ...") otherwise."""
    p = Path(path)
    try:
        with open(p, "rb") as fh:
            raw = fh.read(max_bytes + 1)
    except OSError as e:
        raise UserError(f"{what} {str(p)!r}: cannot read it ({e.strerror or e})") from None
    if len(raw) > max_bytes:
        raise UserError(f"{what} {str(p)!r}: larger than {max_bytes / 2**20:g} MiB; valid: at most "
                        f"{max_bytes / 2**20:g} MiB")
    return raw


def read_json(path: str | Path, what: str, max_bytes: int = MAX_INPUT_BYTES) -> Any:
    """The JSON document in ``path`` (UTF-8, at most ``max_bytes``); :class:`UserError` naming the file."""
    raw = read_bytes(path, what, max_bytes)
    try:
        return json.loads(raw.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise UserError(f"{what} {str(path)!r}: not valid JSON ({e})") from None
    except RecursionError:
        raise UserError(f"{what} {str(path)!r}: JSON nested too deeply") from None
