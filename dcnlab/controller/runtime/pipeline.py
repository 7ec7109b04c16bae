"""A forwarding pipeline: P4Info plus the BMv2 JSON device config."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dcnlab.controller.runtime.p4info import P4Info


@dataclass(frozen=True)
class Pipeline:
    p4info: P4Info
    device_config: bytes
    name: str = "dcnlab"

    @classmethod
    def from_files(cls, p4info_path: str | Path, json_path: str | Path, name: str = "dcnlab") -> Pipeline:
        return cls(P4Info.from_file(p4info_path), Path(json_path).read_bytes(), name)
