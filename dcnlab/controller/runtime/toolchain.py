"""Find the P4 toolchain: on PATH, or under ``$DCNLAB_P4_PREFIX/bin``."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from dcnlab.controller.runtime.errors import ToolMissing

PREFIX_VAR = "DCNLAB_P4_PREFIX"


def prefix() -> Path | None:
    p = os.environ.get(PREFIX_VAR)
    return Path(p) if p else None


def find_tool(name: str) -> Path | None:
    pre = prefix()
    if pre is not None and (pre / "bin" / name).is_file() and os.access(pre / "bin" / name, os.X_OK):
        return pre / "bin" / name
    found = shutil.which(name)
    return Path(found) if found else None


def require_tool(name: str) -> Path:
    tool = find_tool(name)
    if tool is None:
        where = f"${PREFIX_VAR}/bin ({prefix()}) or PATH" if prefix() else f"PATH (or set ${PREFIX_VAR})"
        raise ToolMissing(f"{name} not found on {where}; install p4lang's BMv2/p4c (see README, 'P4 toolchain')")
    return tool


def missing(*names: str) -> list[str]:
    return [n for n in names if find_tool(n) is None]


def tool_env() -> dict[str, str]:
    """Environment for running toolchain programs: the prefix's libraries and Python modules."""
    env = dict(os.environ)
    pre = prefix()
    if pre is None:
        tool = find_tool("simple_switch_grpc")
        pre = tool.parent.parent if tool else None
    if pre is not None:
        libs = str(pre / "lib")
        env["LD_LIBRARY_PATH"] = libs + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
        py = pre / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
        # lib/python3/dist-packages: where Debian's packaging keeps Python modules, e.g. BMv2's CLI modules
        # from a package; simple_switch_CLI runs under dcnlab's venv, which sees no system site directory.
        extra = [str(p) for p in (py / "site-packages", py / "dist-packages", pre / "lib" / "python3" / "dist-packages")
                 if p.is_dir()]
        if extra:
            env["PYTHONPATH"] = ":".join(extra + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return env
