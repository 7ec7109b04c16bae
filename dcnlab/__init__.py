"""dcnlab: a P4/Mininet emulation testbed for data-center fabrics (BCube, fat-tree, Dragonfly).

The layers are subpackages, each depending only on those before it: :mod:`dcnlab.topos` (fabric data)
→ :mod:`dcnlab.controller` (mechanisms and the P4Runtime/Thrift runtime) → :mod:`dcnlab.p4src` →
:mod:`dcnlab.traffic` → :mod:`dcnlab.emu` → :mod:`dcnlab.view` → the scripting API (:mod:`dcnlab.api`) →
:mod:`dcnlab.sweep`, :mod:`dcnlab.figures`, :mod:`dcnlab.results` (the pool; plot style and checks;
summary, tables, outputs) → :mod:`dcnlab.reproduce` (one package per mechanism) → :mod:`dcnlab.bench`,
:mod:`dcnlab.report` → :mod:`dcnlab.cli` (the ``dcnlab`` CLI). ``tests/test_house.py`` checks the order
and that no import circle appears.

The scripting API is importable from here (``dcnlab.Network``, ``dcnlab.TableEntry``, …). Names are
resolved on first use, so ``import dcnlab`` stays cheap: host agents import submodules of this package
and must not pay for Mininet or gRPC.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from typing import Any

__version__ = "0.1.0"

#: public name -> module that defines it
_API: dict[str, str] = {
    "Network": "dcnlab.api", "Host": "dcnlab.api", "Switch": "dcnlab.api", "Link": "dcnlab.api",
    "Capture": "dcnlab.api",
    "TableEntry": "dcnlab.controller.runtime.entities", "MulticastGroup": "dcnlab.controller.runtime.entities",
    "CloneSession": "dcnlab.controller.runtime.entities", "MeterConfig": "dcnlab.controller.runtime.entities",
    "Counter": "dcnlab.controller.runtime.entities", "Update": "dcnlab.controller.runtime.entities",
    "NetOptions": "dcnlab.emu.options", "UserError": "dcnlab.topos.errors",
    "parse_spec": "dcnlab.topos.spec", "load_topology": "dcnlab.topos.files",
    "show": "dcnlab.view.notebook",     # a live view for a notebook cell (Jupyter renders it inline)
}
#: ``dcnlab.<mechanism>`` -> its package (planners; each has a ``dataplane`` module)
_MODULES: dict[str, str] = {
    "aggregation": "dcnlab.controller.aggregation", "multicast": "dcnlab.controller.multicast",
    "congestion": "dcnlab.controller.congestion", "cist": "dcnlab.controller.cist",
    "routing": "dcnlab.controller.routing",
}

__all__ = ["__version__", *_API, *_MODULES]


class _MechanismAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``import dcnlab.multicast.dataplane`` is ``dcnlab.controller.multicast.dataplane`` (the same module
    object, so classes compare equal whichever name imported them)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        parts = fullname.split(".")
        if len(parts) >= 2 and parts[0] == "dcnlab" and parts[1] in _MODULES:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec: Any) -> Any:
        parts = spec.name.split(".")
        return importlib.import_module(".".join([_MODULES[parts[1]], *parts[2:]]))

    def exec_module(self, module: Any) -> None:
        pass


sys.meta_path.insert(0, _MechanismAlias())    # before the path finder, which would load a second copy


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        value = importlib.import_module(_MODULES[name])
    elif name in _API:
        value = getattr(importlib.import_module(_API[name]), name)
    else:
        raise AttributeError(f"module 'dcnlab' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API) | set(_MODULES))
