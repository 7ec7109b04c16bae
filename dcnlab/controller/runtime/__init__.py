"""Switch runtime: multi-switch P4Runtime controller, entities, Thrift channel, fake server."""

from dcnlab.controller.runtime.protobuf_check import require_protobuf

require_protobuf()   # before the first protobuf import: one line naming a `google/__init__.py` that hides it

from dcnlab.controller.runtime.controller import Controller, MultiSwitchError, SwitchTarget
from dcnlab.controller.runtime.entities import (CloneSession, Counter, MeterConfig, MulticastGroup, SwitchState,
                                         TableEntry, Update, UpdateType)
from dcnlab.controller.runtime.errors import P4InfoError, SwitchError, ThriftError, ToolMissing, WriteError
from dcnlab.controller.runtime.p4info import P4Info
from dcnlab.controller.runtime.pipeline import Pipeline

__all__ = ["CloneSession", "Controller", "Counter", "MeterConfig", "MultiSwitchError", "MulticastGroup",
           "P4Info", "P4InfoError", "Pipeline", "SwitchError", "SwitchState", "SwitchTarget", "TableEntry",
           "ThriftError", "ToolMissing", "Update", "UpdateType", "WriteError"]
