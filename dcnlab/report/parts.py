"""The parts of ``dcnlab reproduce all`` (one per reproduction) and their tasks: what the orchestration
(:mod:`dcnlab.report.reproduce_all`) fills in and the report (:mod:`dcnlab.report.write`) reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dcnlab.reproduce.protocol import Reproduction, Task

__all__ = ["PartRun", "Task"]


@dataclass
class PartRun:
    """One reproduction's part (``mechanism``: its name in :mod:`dcnlab.reproduce.registry`): its tasks, their
    results, what it wrote."""

    mechanism: str
    out: Path
    tasks: list[Task] = field(default_factory=list)
    results: list[Any] = field(default_factory=list)
    context: dict[str, Any] = field(default_factory=dict)
    model: Any = None
    """What the headline builder reads (:attr:`dcnlab.reproduce.protocol.Finished.model`)."""
    files: list[Path] = field(default_factory=list)
    seconds: float = 0.0
    emulation: Any = None
    emulation_why: str = ""
    emulation_ok: bool | None = None
    emulation_lines: list[str] = field(default_factory=list)
    emulation_files: list[Path] = field(default_factory=list)
    emulation_runs: dict[str, Any] = field(default_factory=dict)
    """What each run of its BMv2 experiment measured (:attr:`~dcnlab.reproduce.protocol.Emulation.data`), by run
    (``"1"``, ``"2"``, ...), the runs that gave figures: their headlines are combined
    (:func:`dcnlab.results.runs.combine_runs`)."""
    rep: Reproduction | None = None
    """The reproduction as its command configured it (None: the registry's, by ``mechanism``)."""

    @property
    def done(self) -> bool:
        return len(self.results) == len(self.tasks)

    @property
    def reproduction(self) -> Reproduction:
        from dcnlab.reproduce import registry

        return self.rep if self.rep is not None else registry.get(self.mechanism)
