"""An exercise directory in the p4lang tutorials' layout (``dcnlab lab DIR``, :mod:`dcnlab.cli.lab`): what is read
from it before anything is created (the Makefile's ``TOPO`` and ``DEFAULT_PROG``, the topology, the program),
the program compiled and copied where the exercise's scripts look for it, and the ``--exec`` commands run in
their hosts. The command line's docstring describes each step.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dcnlab.topos.errors import UserError

if TYPE_CHECKING:
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


_ASSIGN = re.compile(r"^(?:(?:override|export)\s+)*(?P<var>[A-Za-z_][A-Za-z0-9_.-]*)\s*"
                     r"(?P<op>\?=|:::=|::=|:=|\+=|!=|=)\s*(?P<value>.*)$")


_REF = re.compile(r"\$(?:\((?P<a>[A-Za-z_][A-Za-z0-9_.-]*)\)|\{(?P<b>[A-Za-z_][A-Za-z0-9_.-]*)\})")


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


def lab_program(directory: Path, program: str | Path | None = None) -> Path:
    """The program of the exercise ``directory`` as :func:`load_lab` finds it (``--program``, the Makefile's
    ``DEFAULT_PROG``, the one ``*.p4``), for ``dcnlab ptf``, which needs no topology."""
    makefile = next((directory / n for n in MAKEFILES if os.path.lexists(directory / n)), None)
    return _program(directory, program, makefile_vars(makefile) if makefile is not None else {}, makefile)


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
    return build_into(lab.program, lab.dir)


def build_into(program: Path, directory: Path) -> CompiledProgram:
    """:func:`build` for any program and directory (``dcnlab ptf``: the directory its tests run in)."""
    from dcnlab.p4src.compiler import compile_program

    prog = compile_program(program.stem, src_dir=program.parent)
    out = directory / BUILD_DIR
    build_json, build_p4info = out / f"{program.stem}.json", out / f"{program.stem}.p4.p4info.txtpb"
    try:
        owner = directory.stat()
        made = [d for d in (out, directory / LOGS_DIR) if _kind(d) is None]
        for d in made:
            d.mkdir(exist_ok=True)
        for src, dst in ((prog.json, build_json), (prog.p4info, build_p4info)):
            tmp = dst.with_name(f".{dst.name}.{os.getpid()}")
            shutil.copyfile(src, tmp)
            os.replace(tmp, dst)
        if os.geteuid() == 0 and owner.st_uid != 0:
            for p in (*made, build_json, build_p4info):
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


