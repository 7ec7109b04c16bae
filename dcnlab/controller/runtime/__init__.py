"""Switch runtime: multi-switch P4Runtime controller, entities, Thrift channel, fake server.

The names below are loaded on first use (PEP 562), so that importing one light module of this
package (``runtime.netns``, ``runtime.toolchain``, ``runtime.errors``) does not import gRPC, finsy
and every protobuf module: ``dcnlab --version``, ``dcnlab topo`` and the parser of every command
need none of them. :mod:`dcnlab.controller.runtime.proto`, the one door to the P4Runtime protobuf
modules, checks first that ``google.protobuf`` imports (see :mod:`.protobuf_check`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_WHERE = {
    "Controller": "controller", "MultiSwitchError": "controller", "SwitchTarget": "controller",
    "CloneSession": "entities", "Counter": "entities", "MeterConfig": "entities", "MulticastGroup": "entities",
    "SwitchState": "entities", "TableEntry": "entities", "Update": "entities", "UpdateType": "entities",
    "P4InfoError": "errors", "SwitchError": "errors", "ThriftError": "errors", "ToolMissing": "errors",
    "WriteError": "errors",
    "P4Info": "p4info",
    "Pipeline": "pipeline",
}
__all__ = ["CloneSession", "Controller", "Counter", "MeterConfig", "MultiSwitchError", "MulticastGroup",
           "P4Info", "P4InfoError", "Pipeline", "SwitchError", "SwitchState", "SwitchTarget", "TableEntry",
           "ThriftError", "ToolMissing", "Update", "UpdateType", "WriteError"]
assert sorted(__all__) == sorted(_WHERE)

if TYPE_CHECKING:
    from dcnlab.controller.runtime.controller import Controller, MultiSwitchError, SwitchTarget
    from dcnlab.controller.runtime.entities import (CloneSession, Counter, MeterConfig, MulticastGroup,
                                                    SwitchState, TableEntry, Update, UpdateType)
    from dcnlab.controller.runtime.errors import P4InfoError, SwitchError, ThriftError, ToolMissing, WriteError
    from dcnlab.controller.runtime.p4info import P4Info
    from dcnlab.controller.runtime.pipeline import Pipeline


def __getattr__(name: str) -> Any:
    mod = _WHERE.get(name)
    if mod is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{mod}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
