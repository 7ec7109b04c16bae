"""Read every switch's tables back over P4Runtime and compare them with what the controller computed.

This is the first half of ATPG's check (Zeng et al., CoNEXT 2012, §3: "the test terminal reads
the rules of every switch"): what the switches *hold*, read with one wildcard Read per table and
switch, all switches concurrently, compared entry by entry with what they *should* hold. The second
half, probes that confirm that the entries also *forward*, is :mod:`dcnlab.controller.coverage`.

Decisions:

* Both sides are compared in P4Runtime's canonical form: the expected entries go through the
  P4Info encoder and decoder once (``"10.0.0.1"`` and ``0x0a000001`` are the same key), the read
  ones through the decoder. An entry's identity is its table, match and priority
  (:meth:`TableEntry.key`), as for P4Runtime's INSERT and DELETE.
* Three kinds of difference, each naming the switch and the entry: *missing* (expected, not on the
  switch), *extra* (on the switch, not expected; only in the tables read, so entries another
  mechanism writes into other tables are not extra) and *different* (same key, other action or
  parameters).
* dcnlab's program spreads ECMP with a plain member table (``ecmp_member``), not a P4 action
  profile, so the members are table entries and are read and compared like any other; the
  program has no action-profile members or groups to read.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Literal

from dcnlab.controller.runtime.entities import TableEntry
from dcnlab.controller.runtime.p4info import P4Info

Kind = Literal["missing", "extra", "different"]


@dataclass(frozen=True)
class Mismatch:
    switch: str
    kind: Kind
    expected: TableEntry | None
    found: TableEntry | None

    def __str__(self) -> str:
        if self.kind == "missing":
            return f"{self.switch}: missing {self.expected}"
        if self.kind == "extra":
            return f"{self.switch}: extra {self.found}"
        return f"{self.switch}: different: expected {self.expected}, found {self.found}"


@dataclass
class ReadBack:
    read: dict[str, list[TableEntry]]
    """switch -> the entries read, in the switch's order."""
    expected: int
    mismatches: list[Mismatch] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def entries_read(self) -> int:
        return sum(len(v) for v in self.read.values())

    @property
    def ok(self) -> bool:
        return not self.mismatches

    def count(self, kind: Kind) -> int:
        return sum(m.kind == kind for m in self.mismatches)

    def summary(self) -> str:
        return (f"read-back: {self.entries_read:,} entries from {len(self.read)} switches in {self.seconds:.2f} s, "
                f"{self.expected:,} expected; {self.count('missing')} missing, {self.count('extra')} extra, "
                f"{self.count('different')} different")


class Canonical:
    """Expected entries in the canonical form a Read returns (encoded and decoded once per distinct entry)."""

    def __init__(self, info: P4Info) -> None:
        self.info = info
        self._cache: dict[TableEntry, TableEntry] = {}

    def __call__(self, e: TableEntry) -> TableEntry:
        c = self._cache.get(e)
        if c is None:
            c = self._cache[e] = TableEntry.from_proto(self.info, e.to_proto(self.info).table_entry)
        return c


def diff(expected: Iterable[TableEntry], found: Iterable[TableEntry], switch: str, canonical: Canonical,
         tables: Iterable[str] | None = None) -> list[Mismatch]:
    """What differs between one switch's ``expected`` entries and the ``found`` ones (canonical form),
    within ``tables`` (default: the tables of the expected entries)."""
    want = {}
    for e in expected:
        c = canonical(e)
        want[c.key()] = c
    names = ({canonical.info.table(t).name for t in tables} if tables is not None
             else {k[1] for k in want})
    out: list[Mismatch] = []
    seen = set()
    for f in found:
        if f.table not in names:
            continue
        k = f.key()
        seen.add(k)
        w = want.get(k)
        if w is None:
            out.append(Mismatch(switch, "extra", None, f))
        elif (w.action, w.params) != (f.action, f.params):
            out.append(Mismatch(switch, "different", w, f))
    out.extend(Mismatch(switch, "missing", w, None) for k, w in want.items() if k not in seen)
    return out


def read_tables(client, info: P4Info, tables: Sequence[str]) -> list[TableEntry]:
    """Every entry of ``tables`` on one switch, in one Read (a wildcard entity per table)."""
    return [TableEntry.from_proto(info, e.table_entry)
            for e in client.read(info, [TableEntry(t) for t in tables]) if e.HasField("table_entry")]


def read_back(controller, expected: Mapping[str, Sequence[TableEntry]], tables: Sequence[str] | None = None,
              workers: int = 16) -> ReadBack:
    """Read ``tables`` (default: those of the expected entries) from every switch of ``expected``,
    concurrently, and compare. ``controller``: a :class:`~dcnlab.controller.runtime.controller.Controller`."""
    t0 = time.perf_counter()
    names = list(tables) if tables is not None else sorted({e.table for es in expected.values() for e in es})

    def one(sw: str) -> tuple[list[TableEntry], list[Mismatch]]:
        info = controller.pipeline_of(sw).p4info
        found = read_tables(controller.client(sw), info, names)
        return found, diff(expected[sw], found, sw, canonicals.setdefault(id(info), Canonical(info)), names)

    canonicals: dict[int, Canonical] = {}
    for sw in expected:      # one cache per distinct P4Info, made before the threads share it
        info = controller.pipeline_of(sw).p4info
        canonicals.setdefault(id(info), Canonical(info))
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(expected))), thread_name_prefix="readback") as pool:
        results = dict(zip(expected, pool.map(one, expected)))
    rb = ReadBack({sw: r[0] for sw, r in results.items()}, sum(len(v) for v in expected.values()),
                  [m for r in results.values() for m in r[1]])
    rb.seconds = time.perf_counter() - t0
    return rb
