"""Progress of long work: a tqdm bar on a terminal, one line per part in a log.

A bar redraws itself with carriage returns, which a terminal overwrites and a log file keeps
(``dcnlab reproduce aggregation --quick > log`` used to write some forty of them). So the bar is
drawn only when stderr is a terminal; otherwise each part prints one line when it ends, e.g.
``aggregation rounds: 96 rounds in 41.2 s``.
"""

from __future__ import annotations

import sys
import time
from typing import IO, Any


def is_terminal(stream: IO[str] | None = None) -> bool:
    """Whether ``stream`` (default stderr) is an interactive terminal."""
    stream = stream or sys.stderr
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class Progress:
    """A progress display for ``total`` steps of one part of the work.

    On a terminal it is a tqdm bar on stderr; elsewhere it is silent until :meth:`close`, which
    writes one summary line. ``enabled=False`` silences both. ``delay``: seconds before the bar first
    shows, so that quick work draws none. Use it as a context manager or call :meth:`close`."""

    def __init__(self, total: int, desc: str, unit: str = "it", enabled: bool = True,
                 file: IO[str] | None = None, delay: float = 0.0) -> None:
        self.total, self.desc, self.unit, self.enabled = total, desc, unit, enabled
        self.file = file or sys.stderr
        self.n = 0
        self._t0 = time.monotonic()
        self._closed = False
        self._bar: Any = None
        if enabled and is_terminal(self.file):
            from tqdm import tqdm
            self._bar = tqdm(total=total, desc=desc, unit=unit, file=self.file, delay=delay)

    def update(self, n: int = 1) -> None:
        self.n += n
        if self._bar is not None:
            self._bar.update(n)

    def reached(self, done: int, total: int | None = None) -> None:
        """Move to ``done`` steps (of ``total``, when the work learns its size on the way)."""
        if total is not None and total != self.total:
            self.total = total
            if self._bar is not None:
                self._bar.total = total
        self.update(done - self.n)

    def set_postfix(self, text: str) -> None:
        if self._bar is not None:
            self._bar.set_postfix_str(text)

    def write(self, line: str) -> None:
        """A message that does not break the bar (printed above it on a terminal)."""
        if self._bar is not None:
            self._bar.write(line, file=self.file)
        else:
            print(line, file=self.file, flush=True)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._bar is not None:
            self._bar.close()
        elif self.enabled:
            unit = self.unit if self.n == 1 or self.unit.endswith("s") else self.unit + "s"
            print(f"{self.desc}: {self.n} {unit} in {time.monotonic() - self._t0:.1f} s",
                  file=self.file, flush=True)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def duration_text(seconds: float) -> str:
    """``40 s``, ``3 min``, ``1 h 05 min``: a time left as a person reads it."""
    s = max(0, round(seconds))
    if s < 90:
        return f"{s} s"
    if s < 3600:
        return f"{round(s / 60)} min"
    return f"{s // 3600} h {round(s % 3600 / 60):02d} min"


class ETA:
    """The time left of tasks with cost estimates (CPU seconds each, ``costs``) on ``workers`` processes: at the
    estimates' rate until a twentieth of the cost is done, then at the rate measured so far."""

    def __init__(self, costs: list[float], workers: int) -> None:
        self.costs, self.workers = costs, max(1, workers)
        self.total, self.finished = sum(costs), 0.0
        self._t0 = time.monotonic()

    def done(self, index: int) -> None:
        """Task ``index`` (of ``costs``) is done."""
        self.finished += self.costs[index]

    def seconds_left(self) -> float:
        left = max(0.0, self.total - self.finished)
        elapsed = time.monotonic() - self._t0
        if self.finished >= 0.05 * self.total and elapsed > 0:
            return left * elapsed / self.finished
        return left / self.workers

    def text(self) -> str:
        return f"about {duration_text(self.seconds_left())} left"
