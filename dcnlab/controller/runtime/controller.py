"""Multi-switch P4Runtime controller.

It connects to every switch, pushes pipelines and writes batches concurrently, one thread
per switch. It keeps the desired state of each switch, so that a switch that restarts gets
its pipeline and its state back (:meth:`Controller.reconnect`, or the watcher thread started
by :meth:`Controller.watch`).

Other controllers. :meth:`Controller.step_down` closes the P4Runtime sessions to some switches
on purpose, so that a user's controller can become primary there with any election id; writes
to them then raise :class:`SwitchError` (handed over), Reads still work, and neither the watcher
nor :meth:`Controller.reconnect` touches them (:meth:`Controller.connect` takes them back). A
switch taken over without a step-down (another client arbitrated with a higher election id)
is logged once as a warning by its client, listed by :meth:`Controller.lost_primary`, refuses
writes, and is never "reconnected" by the watcher: that would fight the other controller.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from dcnlab.controller.runtime.client import DEFAULT_BATCH, SwitchClient
from dcnlab.controller.runtime.entities import Counter, SwitchState, TableEntry, Update
from dcnlab.controller.runtime.errors import RuntimeErrorBase, SwitchError
from dcnlab.controller.runtime.pipeline import Pipeline
from dcnlab.controller.runtime.thrift import ThriftChannel

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class SwitchTarget:
    name: str
    device_id: int
    grpc_addr: str
    """``unix:/path`` or ``host:port``."""
    thrift_port: int | None = None
    netns: str | None = None
    """Network namespace the switch's Thrift server listens in (None: this one)."""


class MultiSwitchError(RuntimeErrorBase):
    """Several switches failed the same operation; ``errors`` maps switch -> exception."""

    def __init__(self, what: str, errors: dict[str, BaseException]) -> None:
        lines = "\n".join(f"  {e}" for e in errors.values())
        super().__init__(f"{what} failed on {len(errors)} switch(es):\n{lines}")
        self.errors = errors


class Controller:
    def __init__(self, pipeline: Pipeline | Mapping[str, Pipeline], targets: Iterable[SwitchTarget],
                 election_id: tuple[int, int] = (0, 1),
                 log_dir: Path | None = None, workers: int = 32,
                 client_factory: Callable[..., SwitchClient] = SwitchClient) -> None:
        targets = list(targets)
        if isinstance(pipeline, Mapping):     # one program per switch
            missing = [t.name for t in targets if t.name not in pipeline]
            if missing:
                raise KeyError(f"no pipeline for switch(es): {', '.join(missing)}")
            self.pipelines: dict[str, Pipeline] = {t.name: pipeline[t.name] for t in targets}
            first = next(iter(self.pipelines.values()), None)
        else:
            self.pipelines = {t.name: pipeline for t in targets}
            first = pipeline
        self.pipeline: Pipeline = first  # type: ignore[assignment]
        """The pipeline when every switch runs the same program (else the first switch's; see :meth:`pipeline_of`)."""
        self.targets = {t.name: t for t in targets}
        self.election_id = election_id
        self.log_dir = log_dir
        self.clients: dict[str, SwitchClient] = {}
        self.state: dict[str, SwitchState] = {n: SwitchState() for n in self.targets}
        self._factory = client_factory
        self._pool = ThreadPoolExecutor(max_workers=max(1, min(workers, len(self.targets) or 1)),
                                        thread_name_prefix="p4rt")
        self._locks = {n: threading.Lock() for n in self.targets}
        self._watcher: threading.Thread | None = None
        self._stop = threading.Event()
        self._handed_over: set[str] = set()

    # -- helpers ------------------------------------------------------------------
    def _names(self, names: Iterable[str] | None) -> list[str]:
        if names is None:
            return list(self.targets)
        names = list(names)
        unknown = [n for n in names if n not in self.targets]
        if unknown:
            raise KeyError(f"unknown switch(es): {', '.join(unknown)}")
        return names

    def _parallel(self, what: str, fn: Callable[[str], T], names: Iterable[str]) -> dict[str, T]:
        futures = {n: self._pool.submit(fn, n) for n in names}
        results: dict[str, T] = {}
        errors: dict[str, BaseException] = {}
        for n, fut in futures.items():
            try:
                results[n] = fut.result()
            except RuntimeErrorBase as e:
                errors[n] = e
        if len(errors) == 1:
            raise next(iter(errors.values()))
        if errors:
            raise MultiSwitchError(what, errors)
        return results

    def client(self, name: str) -> SwitchClient:
        try:
            return self.clients[name]
        except KeyError:
            if name in self._handed_over:
                raise SwitchError(name, "use", "FAILED_PRECONDITION",
                                  f"{name} was handed over to another controller (dcnlab stepped down)") from None
            raise SwitchError(name, "use", "FAILED_PRECONDITION", "not connected") from None

    def _log_file(self, name: str) -> Path | None:
        return self.log_dir / f"p4rt-{name}.log" if self.log_dir else None

    # -- lifecycle ----------------------------------------------------------------
    def _connect_one(self, name: str) -> None:
        t = self.targets[name]
        old = self.clients.pop(name, None)
        if old is not None:
            old.close()
        self.clients[name] = self._factory(name, t.device_id, t.grpc_addr, self.election_id, self._log_file(name))

    def connect(self, names: Iterable[str] | None = None) -> None:
        """Connect (again) and become primary; this also takes back switches handed over by
        :meth:`step_down` (arbitration fails if another controller with a higher election id is
        primary there)."""
        names = self._names(names)
        self._handed_over.difference_update(names)
        self._parallel("connect", self._connect_one, names)

    def push_pipeline(self, names: Iterable[str] | None = None) -> None:
        self._parallel("SetForwardingPipelineConfig",
                       lambda n: self.client(n).set_pipeline(self.pipelines[n].p4info, self.pipelines[n].device_config),
                       self._names(names))

    def start(self, names: Iterable[str] | None = None) -> None:
        """Connect and push the pipeline, per switch, all switches concurrently."""

        def one(n: str) -> None:
            self._connect_one(n)
            self.client(n).set_pipeline(self.pipelines[n].p4info, self.pipelines[n].device_config)

        names = self._names(names)
        self._handed_over.difference_update(names)
        self._parallel("connect+pipeline", one, names)

    def step_down(self, names: Iterable[str] | None = None) -> None:
        """Hand switches (default: all) over to another controller: close their P4Runtime sessions so
        that another client becomes primary with any election id. dcnlab then writes nothing to them
        (writes raise :class:`SwitchError`), does not reconnect them (:meth:`watch`, :meth:`reconnect`)
        and logs nothing when another controller arbitrates there; Reads still work."""
        names = [n for n in self._names(names) if n not in self._handed_over]   # again: a no-op
        self._handed_over.update(names)

        def one(n: str) -> None:
            with self._locks[n]:
                c = self.clients.get(n)
                if c is not None:
                    c.step_down()

        self._parallel("step down", one, names)
        if names:
            shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
            log.info("dcnlab stepped down on %d switch(es) (%s); another controller may become primary",
                     len(names), shown)

    def handed_over(self) -> list[str]:
        """Switches handed over to another controller by :meth:`step_down`."""
        return [n for n in self.targets if n in self._handed_over]

    def lost_primary(self) -> list[str]:
        """Switches on which another controller became primary without dcnlab stepping down."""
        return [n for n, c in list(self.clients.items()) if c.lost_primary and n not in self._handed_over]

    def close(self) -> None:
        self._stop.set()
        if self._watcher is not None:
            self._watcher.join(timeout=5)
        for c in list(self.clients.values()):
            c.close()
        self.clients.clear()
        self._pool.shutdown(wait=True)

    def __enter__(self) -> Controller:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- state --------------------------------------------------------------------
    def write(self, updates: Mapping[str, Sequence[Update]], batch: int = DEFAULT_BATCH) -> None:
        """Write each switch's updates (batched), all switches concurrently; remember them."""
        def one(n: str) -> None:
            with self._locks[n]:
                self.client(n).write(self.pipelines[n].p4info, updates[n], batch)
                for u in updates[n]:
                    self.state[n].apply(u)

        self._parallel("Write", one, self._names(n for n in updates if updates[n]))

    def read_counters(self, counter: str, names: Iterable[str] | None = None) -> dict[str, list[Counter]]:
        return self._parallel("Read counters",
                              lambda n: self.client(n).read_counter(self.pipelines[n].p4info, counter),
                              self._names(names))

    def pipeline_of(self, name: str) -> Pipeline:
        """The pipeline switch ``name`` runs."""
        self._names([name])
        return self.pipelines[name]

    def read_table(self, name: str, table: str) -> list[TableEntry]:
        return self.client(name).read_table(self.pipeline_of(name).p4info, table)

    def thrift(self, name: str) -> ThriftChannel:
        t = self.targets[name]
        if t.thrift_port is None:
            raise SwitchError(name, "thrift", "FAILED_PRECONDITION", "switch has no Thrift port")
        return ThriftChannel(name, t.thrift_port, netns=t.netns)

    # -- recovery -----------------------------------------------------------------
    def reconnect(self, name: str, timeout: float = 15.0) -> None:
        """Reconnect to a restarted switch and re-push its pipeline and desired state.

        Refused for a switch handed over by :meth:`step_down`; fails at once (no retries) when
        another controller with a higher election id is primary there."""
        if name in self._handed_over:
            raise SwitchError(name, "reconnect", "FAILED_PRECONDITION",
                              f"{name} was handed over to another controller (dcnlab stepped down); "
                              "connect() takes it back")
        deadline = time.monotonic() + timeout
        with self._locks[name]:
            while True:
                try:
                    self._connect_one(name)
                    break
                except SwitchError as e:
                    if e.what == "arbitration" and e.code == "ALREADY_EXISTS":   # another primary: no retry
                        raise
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)
            c = self.client(name)
            c.set_pipeline(self.pipelines[name].p4info, self.pipelines[name].device_config)
            replay = self.state[name].replay()
            if replay:
                c.write(self.pipelines[name].p4info, replay)
        log.info("%s: reconnected, re-pushed pipeline and %d entities", name, len(replay))

    def watch(self, interval: float = 0.5) -> None:
        """Start a thread that reconnects (and re-pushes to) any switch whose stream dropped; never
        one handed over by :meth:`step_down` or taken over by another controller."""
        if self._watcher is not None:
            return

        def loop() -> None:
            while not self._stop.wait(interval):
                for name, c in list(self.clients.items()):
                    if self._stop.is_set() or c.alive:
                        continue
                    if name in self._handed_over or c.handed_over or c.lost_primary:
                        continue
                    log.warning("%s: P4Runtime stream lost; reconnecting", name)
                    try:
                        self.reconnect(name)
                    except RuntimeErrorBase as e:
                        log.error("%s: reconnect failed: %s", name, e)

        self._watcher = threading.Thread(target=loop, name="p4rt-watch", daemon=True)
        self._watcher.start()
