"""Switch state under P4Runtime's write semantics, for data-plane tests without BMv2."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dcnlab.controller.replication import REPLICATE_TABLE
from dcnlab.controller.runtime.entities import TableEntry, Update, UpdateType


class FakeSwitches:
    """Switch state under P4Runtime write semantics (INSERT of an existing key, MODIFY or DELETE of a missing
    one fail), plus checks BMv2 does not make: a MODIFY changes something, and after every write no
    replication entry points at a missing PRE group. Records every write."""

    def __init__(self) -> None:
        self.state: dict[str, dict[tuple, object]] = {}
        self.writes: list[dict[str, list[Update]]] = []

    def write(self, updates: Mapping[str, Sequence[Update]]) -> None:
        self.writes.append({k: list(v) for k, v in updates.items()})
        for sw, ups in updates.items():
            st = self.state.setdefault(sw, {})
            for u in ups:
                key = u.entity.key()
                if u.type is UpdateType.INSERT:
                    assert key not in st, f"{sw}: INSERT of existing {u.entity}"
                    st[key] = u.entity
                elif u.type is UpdateType.MODIFY:
                    assert key in st, f"{sw}: MODIFY of missing {u.entity}"
                    assert st[key] != u.entity, f"{sw}: MODIFY that changes nothing {u.entity}"
                    st[key] = u.entity
                else:
                    assert key in st, f"{sw}: DELETE of missing {u.entity}"
                    del st[key]
            self._check(sw, st)

    @staticmethod
    def _check(sw: str, st: dict[tuple, object]) -> None:
        for e in st.values():
            if isinstance(e, TableEntry) and e.table == REPLICATE_TABLE:
                gid = dict(e.params)["mcast_grp"]
                assert ("mcast", gid) in st, f"{sw}: entry {e} points at missing group {gid}"

    def entities(self, sw: str) -> set:
        return set(self.state.get(sw, {}).values())
