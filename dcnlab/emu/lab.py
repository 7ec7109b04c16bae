"""An exercise directory in the p4lang tutorials' layout (``dcnlab lab DIR``, :mod:`dcnlab.cli.lab`): what is read
from it before anything is created (the Makefile's ``TOPO`` and ``DEFAULT_PROG``, the topology, the program),
the program compiled and copied where the exercise's scripts look for it, and the ``--exec`` commands run in
their hosts. The command line's docstring describes each step.
"""

from __future__ import annotations

import codecs
import os
import re
import select
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

from dcnlab.topos.errors import UserError

if TYPE_CHECKING:
    from dcnlab.emu.network import FabricNetwork
    from dcnlab.p4src.compiler import CompiledProgram
    from dcnlab.topos.files import UserFabric

NOT_P4 = "is not a P4 source file (its name does not end in .p4)"


DEFAULT_TOPO = "topology.json"


BUILD_DIR = "build"


LOGS_DIR = "logs"
"""Created as the tutorials' ``make run`` creates it: an exercise's controller writes there (the p4runtime
exercise's ``mycontroller.py`` dumps its requests to ``logs/s1-p4runtime-requests.txt``)."""


MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
"""GNU make's order: the first that exists is the one ``make run`` reads."""


MAX_MAKEFILE_BYTES = 1 << 20


BACKGROUND_KEEP = 1 << 20
"""Bytes of a background command's output kept for printing at the end (the last ones)."""


_ASSIGN = re.compile(r"^(?:(?:override|export)\s+)*(?P<var>[A-Za-z_][A-Za-z0-9_.-]*)\s*"
                     r"(?P<op>\?=|:::=|::=|:=|\+=|!=|=)\s*(?P<value>.*)$")


_REF = re.compile(r"\$(?:\((?P<a>[A-Za-z_][A-Za-z0-9_.-]*)\)|\{(?P<b>[A-Za-z_][A-Za-z0-9_.-]*)\})")


_BACKGROUND = re.compile(r"(?<![&\\])&\s*$")


@dataclass(frozen=True)
class Lab:
    """An exercise directory, read and checked (nothing created yet)."""

    dir: Path
    topology: Path
    program: Path
    fabric: UserFabric
    makefile: Path | None = None

    @property
    def name(self) -> str:
        return self.program.stem

    @property
    def build_json(self) -> Path:
        return self.dir / BUILD_DIR / f"{self.name}.json"

    @property
    def build_p4info(self) -> Path:
        return self.dir / BUILD_DIR / f"{self.name}.p4.p4info.txtpb"

    def hosts(self) -> list[str]:
        return [h.name for h in self.fabric.hosts()]

    def rel(self, p: Path) -> str:
        """``p`` relative to the lab directory if it is inside it."""
        try:
            return str(p.relative_to(self.dir))
        except ValueError:
            return str(p)


def _path(text: str | Path) -> Path:
    """``text`` as an absolute path, ``~`` expanded where it names a home directory."""
    from dcnlab.topos.inputs import user_path
    return user_path(text)


def _kind(path: Path) -> int | None:
    """``st_mode`` of ``path`` (None: it does not exist or cannot be looked at)."""
    try:
        return path.stat().st_mode
    except (OSError, ValueError):
        return None


def makefile_vars(path: Path) -> dict[str, str]:
    """The simple variables a Makefile sets at its top level, as GNU make would for ``TOPO`` and
    ``DEFAULT_PROG``: ``=``/``:=``/``::=`` set, ``?=`` sets only a variable not set yet, ``+=`` appends;
    comments, line continuations and recipe lines are handled; conditionals and ``include`` are not
    followed (the tutorials' shared Makefile only supplies ``TOPO = topology.json`` when unset)."""
    from dcnlab.topos.inputs import read_text

    text = read_text(path, "Makefile", MAX_MAKEFILE_BYTES)     # a regular file only: a FIFO never blocks
    out: dict[str, str] = {}
    for line in re.sub(r"[ \t]*\\\r?\n[ \t]*", " ", text).splitlines():
        if line.startswith("\t"):           # a recipe line
            continue
        m = _ASSIGN.match(re.sub(r"(?<!\\)#.*", "", line).strip())
        if m is None:
            continue
        var, op, value = m["var"], m["op"], m["value"].strip()
        if op == "?=" and var in out:
            continue
        if op == "!=":                      # a shell command's output: not run here
            out[var] = "$(shell ...)"
        elif op == "+=" and var in out:
            out[var] = f"{out[var]} {value}".strip()
        else:
            out[var] = value
    return out


MAX_EXPANDED = 4096
"""Characters a Makefile variable may expand to (a path; longer is refused, not computed)."""


def _expand(value: str, variables: dict[str, str], makefile: Path, var: str) -> str:
    """``$(VAR)``/``${VAR}`` of variables the Makefile set, expanded as make would (recursively); a variable
    the Makefile does not set, a circular definition (``A = $(B)``, ``B = $(A)``) or anything else that make
    would compute (functions, automatic variables) is an error naming it (quoted, escaped, cut short)."""
    from dcnlab.topos.inputs import quote, show_path

    what = f"{show_path(makefile)}: {var}"

    def expand(text: str, chain: tuple[str, ...]) -> str:
        def one(m: re.Match[str]) -> str:
            name = m["a"] or m["b"]         # letters, digits, '_', '.', '-' (_REF): safe to print
            if name in chain:
                loop = " -> ".join((*chain[chain.index(name):], name))
                raise UserError(f"{what} = {quote(value)}: variable {name} is defined through itself ({loop}): "
                                f"a circular (recursive) definition; give a plain path")
            if name not in variables:
                raise UserError(f"{what} = {quote(value)}: uses $({name}), which the Makefile does not set "
                                f"(dcnlab reads no environment or included Makefile); give a plain path")
            return expand(variables[name], (*chain, name))
        out = _REF.sub(one, text)
        if len(out) > MAX_EXPANDED:
            raise UserError(f"{what} = {quote(value)}: expands to more than {MAX_EXPANDED} characters; give a plain "
                            f"path")
        return out

    out = expand(value, (var,))
    if "$" in out:
        raise UserError(f"{what} = {quote(value)}: dcnlab expands only $(VAR) of variables set in the Makefile; "
                        f"give a plain path")
    return out


def load_lab(directory: str | Path, program: str | Path | None = None) -> Lab:
    """Read and check an exercise directory (see the module docstring); creates nothing."""
    from dcnlab.topos.files import load_topology
    from dcnlab.topos.inputs import file_problem, quote, show_path

    d = _path(directory)
    try:
        mode: int | None = os.stat(d).st_mode
        why = None
    except (OSError, ValueError):
        mode, why = None, file_problem(d)
    if mode is None:
        raise UserError(f"lab directory {quote(str(directory), 200)} {why}")
    if not stat.S_ISDIR(mode):
        raise UserError(f"lab directory {quote(str(directory), 200)} is not a directory; valid: an exercise "
                        f"directory (a Makefile with TOPO = ... or a topology.json, and a P4 program)")
    makefile = next((d / n for n in MAKEFILES if os.path.lexists(d / n)), None)
    variables = makefile_vars(makefile) if makefile is not None else {}
    topo_rel = variables.get("TOPO") or DEFAULT_TOPO
    if makefile is not None:
        topo_rel = _expand(topo_rel, variables, makefile, "TOPO")
    topology = _path_in(d, topo_rel)
    why = file_problem(topology) if topology is not None else "is not a valid path (it holds a NUL character)"
    if why is not None:
        said = f"its Makefile's TOPO = {quote(topo_rel)}" if "TOPO" in variables else \
            f"{DEFAULT_TOPO} (no TOPO in {'its Makefile' if makefile is not None else 'a Makefile'})"
        raise UserError(f"lab directory {quote(str(directory), 200)}: no topology: {said}: "
                        f"{show_path(topology if topology is not None else topo_rel)} {why}")
    assert topology is not None
    prog = _program(d, program, variables, makefile)
    fabric = load_topology(topology, base=d)
    return Lab(d, topology, prog, fabric, makefile)


def _path_in(d: Path, text: str) -> Path | None:
    """``text`` (a path from a Makefile) relative to ``d``; None if no path can hold it (a NUL)."""
    if "\0" in text:
        return None
    p = Path(text)
    return p if p.is_absolute() else d / p


def _program(d: Path, program: str | Path | None, variables: dict[str, str], makefile: Path | None) -> Path:
    from dcnlab.topos.inputs import file_problem, quote, show_path

    if program is not None:
        p = _path(program)
        why = file_problem(p) or (None if p.suffix == ".p4" else NOT_P4)
        if why is not None:
            raise UserError(f"argument --program: {quote(str(program), 200)} {why}; valid: an existing P4 source "
                            f"FILE.p4")
        return p
    default = variables.get("DEFAULT_PROG")
    if default and makefile is not None:
        p = _path_in(d, _expand(default, variables, makefile, "DEFAULT_PROG"))
        why = "is not a valid path (it holds a NUL character)" if p is None else \
            file_problem(p) or (None if p.suffix == ".p4" else NOT_P4)
        if why is None and p is not None:
            return p
        raise UserError(f"{show_path(makefile)}: DEFAULT_PROG = {quote(default)}: "
                        f"{show_path(p if p is not None else default)} {why}; valid: a P4 source FILE.p4 in the lab "
                        f"directory (or --program FILE)")
    try:
        found = sorted(p for p in d.glob("*.p4") if (m := _kind(p)) is not None and stat.S_ISREG(m))
    except OSError as e:
        raise UserError(f"lab directory {str(d)!r}: cannot list it ({e.strerror or e})") from None
    if len(found) == 1:
        return found[0]
    if not found:
        raise UserError(f"lab directory {str(d)!r} has no P4 program (*.p4) at its root; give one with "
                        f"--program FILE")
    raise UserError(f"lab directory {str(d)!r} has {len(found)} P4 programs at its root "
                    f"({', '.join(p.name for p in found)}); choose one with --program FILE")


def build(lab: Lab) -> CompiledProgram:
    """Compile ``lab``'s program (content-keyed cache) and copy p4c's output to ``DIR/build/``, where the
    exercise's scripts look for it (``<name>.json``, ``<name>.p4.p4info.txtpb``); create ``DIR/logs/``
    (:data:`LOGS_DIR`). Returns the :class:`~dcnlab.p4src.compiler.CompiledProgram`. Run as root in a
    user's directory, what it creates is given to the directory's owner."""
    from dcnlab.p4src.compiler import compile_program

    prog = compile_program(lab.name, src_dir=lab.program.parent)
    out = lab.dir / BUILD_DIR
    try:
        owner = lab.dir.stat()
        made = [d for d in (out, lab.dir / LOGS_DIR) if _kind(d) is None]
        for d in made:
            d.mkdir(exist_ok=True)
        for src, dst in ((prog.json, lab.build_json), (prog.p4info, lab.build_p4info)):
            tmp = dst.with_name(f".{dst.name}.{os.getpid()}")
            shutil.copyfile(src, tmp)
            os.replace(tmp, dst)
        if os.geteuid() == 0 and owner.st_uid != 0:
            for p in (*made, lab.build_json, lab.build_p4info):
                os.chown(p, owner.st_uid, owner.st_gid)
    except OSError as e:
        raise UserError(f"{out}: cannot write the compiled program there ({e.strerror or e})") from None
    return prog


@contextmanager
def in_lab(lab: Lab) -> Iterator[None]:
    """The lab's working directory and PATH for everything the lab starts (host shells, their
    ``commands``, ``--exec``), as under the tutorials' ``make run``; both restored afterwards.
    Run from a virtualenv, its ``bin`` comes first on PATH (``python3`` is dcnlab's, with scapy and
    the P4Runtime modules), as if it were activated."""
    old_cwd, old_path = os.getcwd(), os.environ.get("PATH")
    venv_bin = str(Path(sys.executable).parent)
    os.chdir(lab.dir)
    if sys.prefix != sys.base_prefix and (old_path or "").split(os.pathsep)[0] != venv_bin:
        os.environ["PATH"] = os.pathsep.join([venv_bin, *(old_path.split(os.pathsep) if old_path else [])])
    try:
        yield
    finally:
        os.chdir(old_cwd)
        if old_path is None:
            os.environ.pop("PATH", None)
        else:
            os.environ["PATH"] = old_path


@dataclass(frozen=True)
class Exec:
    """One ``--exec 'HOST COMMAND'``."""

    host: str
    command: str
    background: bool
    given: str

    @property
    def label(self) -> str:
        return f"{self.host}{' (background)' if self.background else ''}: {self.command}"


def parse_exec(text: str) -> Exec:
    parts = text.strip().split(None, 1)
    if len(parts) < 2 or not parts[1].strip():
        raise UserError(f"argument --exec {text!r}: expected 'HOST COMMAND', e.g. 'h1 ping -c 1 10.0.2.2'")
    host, command = parts[0], parts[1].strip()
    background = bool(_BACKGROUND.search(command))
    if background:
        command = _BACKGROUND.sub("", command).rstrip()
        if not command:
            raise UserError(f"argument --exec {text!r}: no command before '&'")
    return Exec(host, command, background, text)


def check_execs(texts: list[str], lab: Lab) -> list[Exec]:
    """Every ``--exec`` parsed, its host checked against the topology (before anything is created)."""
    hosts = lab.hosts()
    out = []
    for text in texts:
        e = parse_exec(text)
        if e.host not in hosts:
            raise UserError(f"argument --exec {text!r}: no host {e.host!r} in {lab.rel(lab.topology)}; valid: "
                            f"{', '.join(hosts)}")
        out.append(e)
    return out


@dataclass
class _Running:
    e: Exec
    proc: subprocess.Popen
    output: bytearray = field(default_factory=bytearray)
    reader: threading.Thread | None = None
    stopped: bool = False


class ExecRunner:
    """Runs ``--exec`` commands in the hosts of a running network, in order; background ones until :meth:`stop`.

    A command runs as ``bash -c COMMAND`` in its host's namespaces (Mininet's ``popen``, which also puts it
    in a session and process group of its own) with the lab directory as working directory, the run's tag
    in its environment (``dcnlab clean`` finds it after a crash) and ``PYTHONUNBUFFERED=1`` (a Python
    script's output is not lost when it is stopped). A foreground command is over when its shell exits,
    even if something it started keeps the output open; whatever is left of any command's process group
    is ended by :meth:`stop`, before the lab goes down."""

    def __init__(self, net: FabricNetwork, cwd: Path, out: IO[str] | None = None) -> None:
        self.net, self.cwd = net, cwd
        self.out = out if out is not None else sys.stdout
        self.background: list[_Running] = []
        self.failed: list[tuple[Exec, int]] = []
        self._groups: list[subprocess.Popen] = []

    def _popen(self, e: Exec) -> subprocess.Popen:
        assert self.net.run is not None
        env = {**os.environ, **self.net.run.tag, "PYTHONUNBUFFERED": "1"}
        p = self.net.hosts[e.host].popen(["bash", "-c", e.command], stdin=subprocess.DEVNULL,
                                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=str(self.cwd),
                                         env=env)
        self._groups.append(p)
        self.net.run.record_process(f"exec:{len(self._groups)}:{e.host}", p.pid, "bash")
        return p

    def _say(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()

    def run(self, e: Exec) -> int | None:
        """Run one command: a foreground one to its end (its status), a background one started (None)."""
        self._say(f"== {e.label}\n")
        p = self._popen(e)
        assert p.stdout is not None
        if e.background:
            r = _Running(e, p)
            r.reader = threading.Thread(target=self._collect, args=(r,), name=f"exec-{e.host}", daemon=True)
            r.reader.start()
            self.background.append(r)
            return None
        dec = codecs.getincrementaldecoder("utf-8")("replace")
        fd, ends_line = p.stdout.fileno(), True
        try:
            while True:
                ready, _, _ = select.select([fd], [], [], 0.1)
                chunk = os.read(fd, 1 << 16) if ready else None
                if chunk == b"" or (chunk is None and p.poll() is not None):
                    break
                text = dec.decode(chunk or b"")
                if text:
                    self._say(text)
                    ends_line = text.endswith("\n")
            rc = p.wait()
        except BaseException:
            _end_group(p)
            raise
        finally:
            p.stdout.close()
        if not ends_line:
            self._say("\n")
        if rc != 0:
            self._say(f"== {e.host}: exit status {rc}: {e.command}\n")
            self.failed.append((e, rc))
        return rc

    @staticmethod
    def _collect(r: _Running) -> None:
        assert r.proc.stdout is not None
        fd = r.proc.stdout.fileno()
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                return
            if not chunk:
                return
            r.output += chunk
            if len(r.output) > 2 * BACKGROUND_KEEP:
                del r.output[:-BACKGROUND_KEEP]

    def stop(self) -> None:
        """End what is left of every command's process group (SIGTERM, then SIGKILL), then print what each
        background command wrote."""
        for r in self.background:
            r.stopped = r.proc.poll() is None
        for p in self._groups:
            _end_group(p)
        self._groups.clear()
        for r in self.background:
            if r.reader is not None:
                r.reader.join(timeout=5)
            how = "stopped at teardown" if r.stopped else f"exit status {r.proc.returncode}"
            text = bytes(r.output[-BACKGROUND_KEEP:]).decode("utf-8", "replace")
            if text and not text.endswith("\n"):
                text += "\n"
            self._say(f"== {r.e.label}: {how}; its output:\n{text}")
        self.background.clear()


def _end_group(p: subprocess.Popen, grace: float = 1.0) -> None:
    """End every process left in ``p``'s process group (``p`` leads it: Mininet's ``mnexec -d`` made it
    a session leader): SIGTERM, then SIGKILL to what is still there after ``grace`` seconds."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        deadline = time.monotonic() + grace
        try:
            os.killpg(p.pid, sig)
            while time.monotonic() < deadline:
                p.poll()                    # reap the leader, so that a zombie does not count
                os.killpg(p.pid, 0)         # ProcessLookupError: nobody left in the group
                time.sleep(0.02)
        except ProcessLookupError:
            break
        except PermissionError:
            break
    p.poll()
