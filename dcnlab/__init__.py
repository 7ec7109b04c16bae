"""dcnlab: a P4/Mininet emulation testbed for data-center fabrics (BCube, fat-tree, Dragonfly).

The layers are subpackages, each depending only on those before it: :mod:`dcnlab.topos` (fabric data)
→ :mod:`dcnlab.controller` (mechanisms and the P4Runtime/Thrift runtime) → :mod:`dcnlab.p4src` →
:mod:`dcnlab.traffic` → :mod:`dcnlab.emu` → :mod:`dcnlab.experiments` (the ``dcnlab`` CLI).

The scripting API is importable from here (``dcnlab.Network``, ``dcnlab.TableEntry``, …). Names are
resolved on first use, so ``import dcnlab`` stays cheap: host agents import submodules of this package
and must not pay for Mininet or gRPC.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

#: public name -> module that defines it
_API: dict[str, str] = {}

__all__ = ["__version__", *_API]


def __getattr__(name: str) -> Any:
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'dcnlab' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API))
