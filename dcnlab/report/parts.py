"""The parts of ``dcnlab reproduce all`` (one per mechanism) and their tasks: what the orchestration
(:mod:`dcnlab.report.reproduce_all`) fills in and the report (:mod:`dcnlab.report.write`) reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Task:
    """One unit of model work: ``mechanism``, its argument (picklable) and an estimate of its seconds."""

    mechanism: str
    arg: Any
    seconds: float


@dataclass
class PartRun:
    """One mechanism's model part: its tasks, their results, what it wrote."""

    mechanism: str
    out: Path
    tasks: list[Task] = field(default_factory=list)
    results: list[Any] = field(default_factory=list)
    context: dict[str, Any] = field(default_factory=dict)
    model: Any = None
    """What the headline builder reads (results dict, rows, summary, cases)."""
    files: list[Path] = field(default_factory=list)
    seconds: float = 0.0
    emulation: Any = None
    emulation_why: str = ""
    emulation_ok: bool | None = None

    @property
    def done(self) -> bool:
        return len(self.results) == len(self.tasks)
