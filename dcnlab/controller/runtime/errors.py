"""Controller runtime errors. Every failed RPC names the switch, the entity and the gRPC status."""

from __future__ import annotations

from collections.abc import Sequence


class RuntimeErrorBase(Exception):
    """Base of dcnlab runtime errors."""


class ToolMissing(RuntimeErrorBase):
    """A P4 toolchain binary (p4c, simple_switch_grpc, simple_switch_CLI) was not found."""


class P4InfoError(RuntimeErrorBase, KeyError):
    """A name or value does not fit the P4Info (unknown table, field, action, too-wide value)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class SwitchError(RuntimeErrorBase):
    """An RPC to one switch failed."""

    def __init__(self, switch: str, what: str, code: str, details: str) -> None:
        super().__init__(f"{switch}: {what} failed: {code}: {details}")
        self.switch, self.what, self.code, self.details = switch, what, code, details


class WriteError(SwitchError):
    """Some updates of a Write batch failed; ``failures`` lists (update, code, message)."""

    def __init__(self, switch: str, failures: Sequence[tuple[object, str, str]]) -> None:
        first = failures[0]
        more = f" (+{len(failures) - 1} more)" if len(failures) > 1 else ""
        super().__init__(switch, f"Write of {first[0]}", first[1], f"{first[2]}{more}")
        self.failures = list(failures)


class ThriftError(RuntimeErrorBase):
    """A simple_switch_CLI command failed."""

    def __init__(self, switch: str, command: str, message: str) -> None:
        super().__init__(f"{switch}: thrift command {command!r} failed: {message}")
        self.switch, self.command, self.message = switch, command, message
