"""Compile the P4 programs with p4c into a cache keyed by content.

The key hashes every ``.p4`` source in the program's folder and every file they include, the program name, the p4c version, the
arguments and the size defines (:mod:`dcnlab.p4src.sizing`). An unchanged program is never recompiled. A compile writes into a staging
directory and renames it into place, so two concurrent compiles cannot corrupt the cache.
Cache root: ``$DCNLAB_CACHE`` or ``~/.cache/dcnlab``, then ``p4c/<key>/``.
"""

from __future__ import annotations

import hashlib
import re
import json
import logging
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from dcnlab.controller.runtime.errors import RuntimeErrorBase
from dcnlab.controller.runtime.pipeline import Pipeline
from dcnlab.controller.runtime.toolchain import require_tool, tool_env

log = logging.getLogger(__name__)

SRC_DIR = Path(__file__).resolve().parent
DEFAULT_PROGRAM = "dcnlab"
P4C_ARGS = ("--target", "bmv2", "--arch", "v1model", "--std", "p4-16")


class CompileError(RuntimeErrorBase):
    """A program that cannot be compiled; ``output`` is p4c's own message when p4c refused it
    (``status`` its exit status), None when p4c did not run."""

    def __init__(self, message: str, output: str | None = None, status: int | None = None) -> None:
        super().__init__(message)
        self.output = output
        self.status = status


@dataclass(frozen=True)
class CompiledProgram:
    name: str
    json: Path
    p4info: Path
    key: str
    cached: bool

    def pipeline(self, compact: bool = True) -> Pipeline:
        """The pipeline to push, with the device config of :func:`device_json`. ``compact``: also
        without p4c's ``source_info`` objects and whitespace (781 KB -> 157 KB for dcnlab.p4), which
        BMv2 reads only to name source lines in its logs; every switch parses the device config when
        the pipeline is pushed, so this cuts the push of a fat-tree k=8 by about a second. Keep the
        source lines when BMv2 logs at info, debug or trace level."""
        return Pipeline.from_files(self.p4info, device_json(self.json, compact), self.name)


def _strip_source_info(o: object) -> None:
    if isinstance(o, dict):
        o.pop("source_info", None)
        for v in o.values():
            _strip_source_info(v)
    elif isinstance(o, list):
        for v in o:
            _strip_source_info(v)


def shrink_keyless_tables(doc: dict) -> int:
    """Give every table without a key ``max_size`` 1; return how many there were.

    p4c turns each action called directly from a control block into a hidden keyless table
    (``tbl_<file><line>``, not in the P4Info) of the default size, 1,024, and BMv2 allocates an
    entry slot for every one of ``max_size`` entries when it loads the program. dcnlab.p4 has 36
    such tables: 5.3 MiB of every switch's 46 MiB on a fat-tree k=4 (measured). A keyless table can
    hold no entry, only its default action, so one slot changes nothing but the memory."""
    n = 0
    for pipe in doc.get("pipelines", ()):
        for table in pipe.get("tables", ()):
            if not table.get("key") and table.get("max_size", 1) > 1:
                table["max_size"] = 1
                n += 1
    return n


def device_json(path: Path, compact: bool = True) -> Path:
    """The BMv2 JSON to push, made once beside ``path`` (atomically): p4c's output with its keyless
    tables shrunk (:func:`shrink_keyless_tables`), and if ``compact`` without ``source_info`` and
    whitespace (``<name>.device.compact.json``; else ``<name>.device.json``)."""
    out = path.with_suffix(".device.compact.json" if compact else ".device.json")
    if not out.is_file():
        doc = json.loads(path.read_text())
        shrink_keyless_tables(doc)
        if compact:
            _strip_source_info(doc)
        tmp = out.with_name(f".{out.name}.{os.getpid()}")
        tmp.write_text(json.dumps(doc, separators=(",", ":")) if compact else json.dumps(doc, indent=1))
        os.replace(tmp, out)
    return out


def cache_root() -> Path:
    return Path(os.environ.get("DCNLAB_CACHE") or Path.home() / ".cache" / "dcnlab")


@lru_cache(maxsize=4)
def p4c_version(p4c: Path) -> str:
    """``p4c --version``, remembered per binary (path, inode, size, mtime): running p4c only to ask
    costs a quarter of a second, a tenth of a fat-tree k=4 bring-up."""
    st = p4c.resolve().stat()
    stamp = hashlib.sha256(f"{p4c.resolve()}\0{st.st_ino}\0{st.st_size}\0{st.st_mtime_ns}".encode()).hexdigest()[:24]
    memo = cache_root() / "p4c" / f"version-{stamp}"
    if memo.is_file():
        return memo.read_text()
    out = subprocess.run([str(p4c), "--version"], capture_output=True, text=True, env=tool_env(), check=False)
    version = (out.stdout or out.stderr).strip()
    if out.returncode == 0 and version:
        memo.parent.mkdir(parents=True, exist_ok=True)
        tmp = memo.with_name(f".{memo.name}.{os.getpid()}")
        tmp.write_text(version)
        os.replace(tmp, memo)
    return version


_INCLUDE = re.compile(rb'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources_digest(src_dir: Path = SRC_DIR) -> str:
    """Digest of every ``.p4`` in ``src_dir`` and of every file they ``#include "..."``, transitively
    (looked up beside the including file, then in ``src_dir``, as p4c's ``-I`` does), so that editing
    ``include/headers.p4`` of a user's program rebuilds it."""
    h = hashlib.sha256()
    todo = sorted(src_dir.glob("*.p4"))
    seen: set[Path] = set()
    while todo:
        p = todo.pop(0).resolve()
        if p in seen or not p.is_file():
            continue
        seen.add(p)
        data = p.read_bytes()
        h.update(str(p.relative_to(src_dir.resolve()) if p.is_relative_to(src_dir.resolve()) else p).encode()
                 + b"\0" + data + b"\0")
        for inc in _INCLUDE.findall(data):
            rel = Path(inc.decode(errors="replace"))
            todo += [c for c in (p.parent / rel, src_dir / rel) if c.is_file()][:1]
    return h.hexdigest()


def compile_program(name: str = DEFAULT_PROGRAM, src_dir: Path = SRC_DIR,
                    defines: Mapping[str, int] | None = None) -> CompiledProgram:
    """Compile ``src_dir/<name>.p4`` (or return the cached build) with ``-DNAME=value`` per define."""
    main = src_dir / f"{name}.p4"
    if not main.is_file():
        raise CompileError(f"no P4 program {main}")
    p4c = require_tool("p4c")
    dflags = [f"-D{k}={int(v)}" for k, v in sorted((defines or {}).items())]
    h = hashlib.sha256()
    for part in (name, sources_digest(src_dir), p4c_version(p4c), " ".join(P4C_ARGS), " ".join(dflags)):
        h.update(part.encode() + b"\0")
    key = h.hexdigest()[:24]
    final = cache_root() / "p4c" / key
    result = CompiledProgram(name, final / f"{name}.json", final / f"{name}.p4info.txtpb", key, True)
    if result.json.is_file() and result.p4info.is_file():
        log.debug("p4c cache hit %s", final)
        return result
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=final.parent))
    try:
        argv = [str(p4c), *P4C_ARGS, *dflags, "-o", str(staging), "--p4runtime-files",
                str(staging / f"{name}.p4info.txtpb"), "-I", str(src_dir), str(main)]
        log.info("compiling %s with p4c", main.name)
        proc = subprocess.run(argv, capture_output=True, text=True, env=tool_env(), check=False)
        if proc.returncode != 0:
            message = (proc.stderr.strip() or proc.stdout.strip())[-3000:]
            raise CompileError(f"p4c failed on {main} (exit {proc.returncode}):\n{message}", message, proc.returncode)
        try:
            os.rename(staging, final)
        except OSError:  # another process finished first: its output is identical
            if not final.is_dir():
                raise
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return CompiledProgram(name, result.json, result.p4info, key, False)
