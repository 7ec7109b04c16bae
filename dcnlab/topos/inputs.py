"""A user's files, opened safely, and a user's text, quoted safely in an error message.

Every file a user names (a topology file, a runtime JSON or CLI file it refers to, a program, a lab's
Makefile, a multicast groups file) is opened through :func:`read_bytes` (or :func:`read_text`,
:func:`read_json`): only a regular file is opened (a FIFO, a device, a directory or a symlink loop is
refused before anything waits on it), at most ``max_bytes`` of it are read (``/dev/zero`` or a 3 GB
file never reaches memory), and every failure is one :class:`UserError` line naming the file and what
it is. A file named *inside* another file (a reference) is found with :func:`locate`, which names every
path it tried.

Any user text quoted in a message goes through :func:`quote` (a token: repr-like escaping of control
characters, cut short) or :func:`escape` (a path or a name: control characters escaped, nothing cut),
so that no message prints a raw control character (an ANSI escape that clears the screen, a NUL) or
echoes a whole line of a file that is not the user's to read.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dcnlab.topos.errors import UserError

MAX_INPUT_BYTES = 64 << 20
"""A user's input file is read up to this size (64 MiB)."""
MAX_QUOTE = 60
"""Characters of a user's token quoted in a message (:func:`quote`); longer ones are cut."""
MAX_PATH_SHOWN = 240
"""Characters of a path shown in a message (:func:`escape` of a path): its last ones are kept."""


# -- quoting ----------------------------------------------------------------------------------------
def escape(text: object, limit: int | None = None) -> str:
    """``text`` with every character that is not printable escaped as ``repr`` escapes it (``\\x1b``,
    ``\\n``, ``\\x00``, ``\\u202e``); printable text, quotes and backslashes unchanged. With ``limit``,
    at most that many characters are kept and ``...`` marks the cut."""
    s = str(text)
    cut = limit is not None and len(s) > limit
    if cut:
        s = s[:limit]
    if not s.isprintable():
        s = "".join(c if c.isprintable() else repr(c)[1:-1] for c in s)
    return s + "..." if cut else s


def quote(value: object, limit: int = MAX_QUOTE) -> str:
    """A user's token for a message: a string as ``repr`` quotes it (control characters escaped), cut to
    ``limit`` characters with ``...`` and its length; any other JSON value in JSON notation, cut the same
    way. ``quote('\\x1b[2J')`` is ``'\\x1b[2J'``; a 5,000-character name is its first 60 characters,
    ``...`` and ``(5000 characters)``."""
    if isinstance(value, str):
        if len(value) <= limit:
            return repr(value)
        return f"{repr(value[:limit])[:-1]}...{repr(value[:limit])[-1]} ({len(value)} characters)"
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int) and value.bit_length() > 3 * limit:
        return f"an integer of about {int(value.bit_length() * 0.30103)} digits"
    try:
        text = json.dumps(value, ensure_ascii=True, allow_nan=True)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return escape(text, limit)


def show_path(path: str | Path) -> str:
    """A path for a message, unquoted: control characters escaped, a very long one cut to its last
    :data:`MAX_PATH_SHOWN` characters (where the file's own name is)."""
    s = str(path)
    if len(s) > MAX_PATH_SHOWN:
        s = "..." + s[-MAX_PATH_SHOWN:]
    return escape(s)


def _q(path: str | Path) -> str:
    """A path as the messages of this module quote it: ``'PATH'`` as ``repr`` writes it (control
    characters escaped), a very long one cut to its last :data:`MAX_PATH_SHOWN` characters."""
    s = str(path)
    return repr(s if len(s) <= MAX_PATH_SHOWN else "..." + s[-MAX_PATH_SHOWN:])


def user_path(text: str | Path) -> Path:
    """A path a user typed, absolute, ``~`` expanded where it names a home directory (``~nobody/x`` of no
    such user stays a relative name, as the shell leaves it, instead of raising RuntimeError)."""
    p = Path(text)
    try:
        p = p.expanduser()
    except RuntimeError:
        pass
    return p.absolute()


# -- what a path is ------------------------------------------------------------------------------------
_KINDS = ((stat.S_ISDIR, "is a directory"), (stat.S_ISFIFO, "is not a regular file (a FIFO)"),
          (stat.S_ISCHR, "is not a regular file (a character device)"),
          (stat.S_ISBLK, "is not a regular file (a block device)"),
          (stat.S_ISSOCK, "is not a regular file (a socket)"))


def _mode_problem(mode: int) -> str | None:
    if stat.S_ISREG(mode):
        return None
    return next((why for test, why in _KINDS if test(mode)), "is not a regular file")


def _os_problem(e: OSError) -> str:
    if e.errno == errno.ELOOP:
        return "is a symlink loop (too many levels of symbolic links)"
    if e.errno == errno.ENOENT:
        return "does not exist"
    if e.errno == errno.ENOTDIR:
        return "does not exist (a part of its path is not a directory)"
    if e.errno == errno.ENAMETOOLONG:
        return "is not a valid path (name too long)"
    return f"cannot be read ({e.strerror or e})"


def file_problem(path: str | Path, max_bytes: int | None = None) -> str | None:
    """What keeps ``path`` from being read as a user's file, as a phrase to follow the path ("does not
    exist", "is a directory", "is not a regular file (a FIFO)", "is a symlink loop ...", "cannot be read
    (Permission denied)", "is larger than ..."); None for a readable regular file. Symbolic links are
    followed; nothing is opened that could block."""
    try:
        st = os.stat(path)
    except OSError as e:
        return _os_problem(e)
    except ValueError:              # an embedded NUL
        return "is not a valid path (it holds a NUL character)"
    why = _mode_problem(st.st_mode)
    if why is None and max_bytes is not None and st.st_size > max_bytes:
        why = f"is larger than {_size(max_bytes)}; valid: at most {_size(max_bytes)}"
    if why is None and not os.access(path, os.R_OK):
        why = "cannot be read (Permission denied)"
    return why


def check_file(path: str | Path, what: str, max_bytes: int | None = None) -> Path:
    """``path`` if it is a readable regular file (at most ``max_bytes``); else :class:`UserError`:
    ``WHAT 'PATH': is a directory`` (or whichever problem :func:`file_problem` names)."""
    why = file_problem(path, max_bytes)
    if why is not None:
        raise UserError(f"{what} {_q(path)}: {why}")
    return Path(path)


def _size(n: int) -> str:
    return f"{n / 2**20:g} MiB" if n >= 1 << 20 else f"{n:,} bytes"


def locate(ref: str | Path, bases: Sequence[Path], max_bytes: int | None = MAX_INPUT_BYTES) -> Path:
    """The file a user's reference names: ``ref`` itself if absolute, else ``base / ref`` for the first
    of ``bases`` where that is a readable regular file. Returns an absolute path with symbolic links
    resolved. Otherwise raises :class:`UserError` whose message names every path tried and what each
    is: ``file /a/x.json does not exist; /b/x.json is a directory`` (the caller puts the element first)."""
    p = Path(ref)
    try:
        p = p.expanduser()
    except RuntimeError:            # ~user of no user: a relative name like any other
        pass
    tried: list[Path] = []
    for cand in ([p] if p.is_absolute() else [b / p for b in bases]):
        cand = Path(os.path.abspath(cand))
        if cand not in tried:
            tried.append(cand)
    problems = []
    for cand in tried:
        why = file_problem(cand, max_bytes)
        if why is None:
            return Path(os.path.realpath(cand))
        problems.append(f"{show_path(cand)} {why}")
    if not tried:
        raise UserError(f"file {quote(str(ref))}: nowhere to look for it (a relative path without a directory)")
    raise UserError("file " + "; ".join(problems))


# -- reading ---------------------------------------------------------------------------------------------
def read_bytes(path: str | Path, what: str, max_bytes: int = MAX_INPUT_BYTES) -> bytes:
    """The content of ``path``, at most ``max_bytes``; :class:`UserError` ("``what`` 'PATH': ...") otherwise.

    Only a regular file is read: the file is opened without blocking (a FIFO swapped in after a check
    still cannot hang the open) and refused by what it is (a FIFO, a device, a directory); a symlink loop
    or a missing file is one line too."""
    p = Path(path)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise UserError(f"{what} {_q(p)}: {_os_problem(e)}") from None
    except ValueError:
        raise UserError(f"{what} {_q(p)}: is not a valid path (it holds a NUL character)") from None
    try:
        why = _mode_problem(os.fstat(fd).st_mode)
        if why is not None:
            raise UserError(f"{what} {_q(p)}: {why}")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            raw = fh.read(max_bytes + 1)
    except OSError as e:
        raise UserError(f"{what} {_q(p)}: cannot read it ({e.strerror or e})") from None
    finally:
        os.close(fd)
    if len(raw) > max_bytes:
        raise UserError(f"{what} {_q(p)}: larger than {_size(max_bytes)}; valid: at most {_size(max_bytes)}")
    return raw


def read_text(path: str | Path, what: str, max_bytes: int = MAX_INPUT_BYTES) -> str:
    """:func:`read_bytes` decoded as UTF-8; a file that is not UTF-8 is one line naming the byte."""
    raw = read_bytes(path, what, max_bytes)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UserError(f"{what} {_q(path)}: not UTF-8 text ({e.reason} at byte {e.start})") from None


def read_json(path: str | Path, what: str, max_bytes: int = MAX_INPUT_BYTES) -> Any:
    """The JSON document in ``path`` (UTF-8, at most ``max_bytes``); :class:`UserError` naming the file.
    A number Python will not convert (more than 4,300 digits) or nesting too deep is such an error too."""
    raw = read_bytes(path, what, max_bytes)
    try:
        return json.loads(raw.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise UserError(f"{what} {_q(path)}: not valid JSON ({escape(e, 200)})") from None
    except RecursionError:
        raise UserError(f"{what} {_q(path)}: JSON nested too deeply") from None
    except ValueError as e:         # int('9' * 5000): Python's limit on integer string conversion
        raise UserError(f"{what} {_q(path)}: {json_value_problem(e)}") from None


def json_value_problem(e: ValueError) -> str:
    """A ``json.loads`` ValueError that is not a syntax error, as a phrase: Python refuses to convert a
    number of more than 4,300 digits."""
    if "digits" in str(e):
        return "holds a number of more than 4300 digits; valid: numbers in the ranges the format gives"
    return f"invalid JSON value ({escape(e, 120)})"
