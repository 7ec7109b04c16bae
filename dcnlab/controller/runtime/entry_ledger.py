"""What a switch's entry files ask of it, with the checks that need every entry at once: no entry
given twice (PI refuses the second INSERT with ALREADY_EXISTS) and no table holding more entries than
its P4Info ``size`` (BMv2 refuses the entry past it) -- within one file and across a switch's files
(:meth:`Entries.extend`), so that the error names both entries before anything is written."""

from __future__ import annotations

from dataclasses import dataclass, field

from dcnlab.controller.runtime.entities import CloneSession, Entity, MulticastGroup, TableEntry, Update
from dcnlab.controller.runtime.errors import RuntimeErrorBase


class EntryFileError(RuntimeErrorBase):
    """An entry does not fit the program: ``FILE: ENTRY: what is wrong`` (one line)."""


def _same(entity: Entity) -> str:
    if isinstance(entity, MulticastGroup):
        return f"multicast group {entity.mgid}"
    if isinstance(entity, CloneSession):
        return f"clone session {entity.session_id}"
    return "table, match key and priority"


@dataclass
class Entries:
    """What one file (or a switch's files) asks of one switch: P4Runtime updates, then Thrift commands,
    in file order. ``where[i]`` names the file and element of ``updates[i]`` (``FILE: table_entries[3] (T)``)."""

    updates: list[Update] = field(default_factory=list)
    thrift: list[str] = field(default_factory=list)
    where: list[str] = field(default_factory=list)
    sizes: dict[str, int] = field(default_factory=dict)
    """table -> the entries it holds at most (its P4Info size; 0: not said)."""
    _seen: dict[tuple, int] = field(default_factory=dict, repr=False)
    _count: dict[str, int] = field(default_factory=dict, repr=False)

    def add(self, entity: Entity, where: str, size: int = 0) -> None:
        """Append ``+entity`` (``~entity`` for a table's default action, which P4Runtime only lets one
        MODIFY), refusing a second entry with the same key or one past its table's ``size``."""
        if isinstance(entity, TableEntry) and entity.is_default:
            self._append(~entity, where)
            return
        key = entity.key()
        first = self._seen.get(key)
        if first is not None:
            raise EntryFileError(f"{where}: the same entry as {self.where[first]} (same {_same(entity)}: PI "
                                 f"refuses the second with ALREADY_EXISTS); valid: each entry once")
        if isinstance(entity, TableEntry):
            if size:
                self.sizes[entity.table] = size
            n = self._count.get(entity.table, 0) + 1
            limit = self.sizes.get(entity.table, 0)
            if limit and n > limit:
                raise EntryFileError(f"{where}: entry {n} of table {entity.table}, which holds at most {limit} "
                                     f"entries (its size in the P4Info); valid: at most {limit}")
            self._count[entity.table] = n
        self._seen[key] = len(self.updates)
        self._append(+entity, where)

    def _append(self, update: Update, where: str) -> None:
        self.updates.append(update)
        self.where.append(where)

    def extend(self, other: Entries) -> None:
        """Append another file's entries for the same switch, with the same checks across both."""
        self.sizes.update(other.sizes)
        wheres = other.where + ["(an entry)"] * (len(other.updates) - len(other.where))
        for update, where in zip(other.updates, wheres):
            self.add(update.entity, where)
        self.thrift += other.thrift
