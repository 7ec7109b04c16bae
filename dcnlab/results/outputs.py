"""Output paths of every ``dcnlab`` command: checked before the work, reported in one line when a write fails.

Every option that writes (``topo export -o``, ``--plot``, ``--out``) goes through this module:

* :func:`output_file` and :func:`output_dir` check the path up front, before any long computation:
  an empty name, a missing parent directory, a directory where a file is wanted (or the reverse),
  a read-only or pseudo file system (a probe file is created and removed), and for images a file
  name that does not end in ``.png`` (matplotlib would otherwise pick the format from the suffix,
  refuse unknown ones, and write ``NAME.png`` for a name without a suffix);
* :func:`writing` turns an ``OSError`` at the actual write (a full disk, a file system that became
  read-only) into a :class:`UserError` that names the file, so the CLI prints one line and exits 2;
* :func:`write_text` and :func:`save_figure` are the two writes wrapped that way.

The ``wrote FILE`` lines of the commands name exactly the paths returned here.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dcnlab.topos.errors import UserError

IMAGE_SUFFIX = ".png"


def _reason(e: OSError) -> str:
    return e.strerror or str(e) or type(e).__name__


def output_file(text: str, option: str, suffix: str | None = None) -> Path:
    """The file ``text`` names, checked for writing; :class:`UserError` naming ``option`` otherwise.

    With ``suffix`` (e.g. ``.png``) the name must end in it. An existing file is opened for
    appending and closed (nothing is changed); a new one is created and removed again, which also catches
    read-only and pseudo file systems such as ``/proc``."""
    if not text or not text.strip():
        raise UserError(f"{option}: the file name is empty; valid: a file name"
                        + (f" ending in {suffix}" if suffix else ""))
    path = Path(text)
    if suffix is not None and path.suffix.lower() != suffix:
        raise UserError(f"{option} {text}: the file name must end in {suffix}")
    if path.is_dir():
        raise UserError(f"{option} {text}: is a directory; valid: a file name")
    parent = path.parent
    if not parent.exists():
        raise UserError(f"{option} {text}: directory {parent} does not exist")
    if not parent.is_dir():
        raise UserError(f"{option} {text}: {parent} is not a directory")
    try:
        if path.exists():   # non-blocking: a FIFO without a reader must not hang the check
            os.close(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK))
        else:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            os.close(fd)
            path.unlink()
    except OSError as e:
        raise UserError(f"{option} {text}: cannot write it ({_reason(e)})") from None
    return path


def image_file(text: str, option: str) -> Path:
    """:func:`output_file` for a PNG image: the name must end in ``.png``."""
    return output_file(text, option, IMAGE_SUFFIX)


def output_dir(text: str, option: str) -> Path:
    """The directory ``text`` names, created if needed and checked for writing (a probe file)."""
    if not text or not text.strip():
        raise UserError(f"{option}: the directory name is empty; valid: a directory")
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise UserError(f"{option} {text}: exists and is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"{option} {text}: cannot create the directory ({_reason(e)})") from None
    try:
        with tempfile.TemporaryFile(dir=path, prefix=".dcnlab-probe-"):
            pass
    except OSError as e:
        raise UserError(f"{option} {text}: cannot write in the directory ({_reason(e)})") from None
    return path


@contextmanager
def writing(target: Path | str, option: str) -> Iterator[None]:
    """Turn an ``OSError`` raised inside the block (a write) into a one-line :class:`UserError`
    naming the file (the error's own file name, else ``target``). Keep prints to stdout outside:
    a closed pipe is an ``OSError`` too, and the CLI handles it itself."""
    try:
        yield
    except OSError as e:
        name = e.filename if e.filename is not None else target
        where = f"{option} {target}" if str(name) == str(target) else f"{option} {target}: {name}"
        raise UserError(f"{where}: cannot write it ({_reason(e)})") from None


def write_text(path: Path, text: str, option: str) -> Path:
    """Write ``text`` to ``path``; an ``OSError`` becomes a :class:`UserError` naming the file."""
    with writing(path, option):
        path.write_text(text)
    return path


def save_figure(fig: Any, path: Path, option: str, **kwargs: Any) -> Path:
    """``fig.savefig(path)``; an ``OSError`` becomes a :class:`UserError` naming the file."""
    with writing(path, option):
        fig.savefig(path, **kwargs)
    return path
