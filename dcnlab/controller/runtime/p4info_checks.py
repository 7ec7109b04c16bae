"""PI's checks of a table entry against the P4Info, for the fake P4Runtime server.

BMv2's P4Runtime server is PI's frontend (p4lang/PI, ``proto/frontend/src``); this module does what
its ``device_mgr.cpp`` (``construct_match_key``, ``validate_action``, ``construct_direct_resources``,
``validate_entry_ttl``), ``common.cpp`` (``bytestring_p4rt_to_pi``) and ``action_helpers.cpp``
(``construct_action_data``) do, in the same order and with the same canonical codes and messages,
so that a write the fake accepts is one BMv2 accepts. Read PI at the commit BMv2 is built with
(f96af95 here) before changing a rule; quirks are kept on purpose and say so where they are.

PI's rules in short (all INVALID_ARGUMENT unless said):

* ids: a table, action or counter id must exist in the P4Info with its kind's id prefix, else
  "Invalid P4 id" (unknown match-field and parameter ids have their own messages);
* bytestrings: any length is accepted as long as the value fits the bitwidth (shorter ones are
  zero-padded, leading zero bytes are dropped; an empty one is 0); a value needing more bits is
  "Bytestring provided does not fit within N bits";
* match: every exact field present; LPM, ternary, optional and range fields omitted for "don't
  care", never given as prefix length 0, mask 0 or the full range; LPM values have no bits past
  the prefix, ternary values none outside the mask, range low <= high; a field once; priority > 0
  exactly when the table has a ternary, range or optional field (a negative one is refused here
  only: PI passes it on and BMv2 aborts on an assertion);
* action: one of the table's actions, not a ``@defaultonly`` one in an entry (PERMISSION_DENIED),
  not a ``@tableonly`` one as default (PERMISSION_DENIED), no default change on a table with a
  const default action (PERMISSION_DENIED); exactly the action's parameters.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dcnlab.controller.runtime.proto import code_pb2, p4info_pb2, p4runtime_pb2

P4Ids = p4info_pb2.P4Ids
MT = p4info_pb2.MatchField
SCOPE = p4info_pb2.ActionRef
INVALID = code_pb2.INVALID_ARGUMENT
INVALID_ID = "Invalid P4 id"
NEEDS_PRIORITY = (MT.TERNARY, MT.RANGE, MT.OPTIONAL)


class Refused(Exception):
    """A write PI refuses: its canonical code (``google.rpc.Code``) and PI's message."""

    def __init__(self, code: int, message: str = "") -> None:
        super().__init__(message)
        self.code, self.message = code, message


def to_pi(value: bytes, nbits: int) -> bytes:
    """PI's ``bytestring_p4rt_to_pi``: ``value`` as exactly ``ceil(nbits / 8)`` bytes."""
    nbytes = (nbits + 7) // 8
    if len(value) < nbytes:
        return bytes(nbytes - len(value)) + value
    if int.from_bytes(value, "big").bit_length() > nbits:
        raise Refused(INVALID, f"Bytestring provided does not fit within {nbits} bits")
    return value[len(value) - nbytes:]


def to_p4rt(value: bytes) -> bytes:
    """PI's ``bytestring_pi_to_p4rt``: without leading zero bytes, ``b"\\x00"`` for 0 (how PI reads back)."""
    return value.lstrip(b"\x00") or b"\x00"


def _lpm_trailing_zeros_ok(value: bytes, plen: int) -> bool:
    """PI's ``check_prefix_trailing_zeros``. It counts the prefix from the first bit of the padded
    bytes, not of the field: for a field whose width is not a multiple of 8, PI refuses values that
    the P4Runtime specification allows (a 9-bit field, 0x100/1); kept, as BMv2 refuses them too."""
    free = len(value) * 8 - plen
    return int.from_bytes(value, "big") & ((1 << free) - 1) == 0


@dataclass(frozen=True)
class FieldInfo:
    id: int
    bitwidth: int
    match_type: int

    @property
    def nbytes(self) -> int:
        return (self.bitwidth + 7) // 8


@dataclass
class TableInfo:
    id: int
    fields: list[FieldInfo]
    actions: dict[int, int]            # action id -> ActionRef scope
    size: int                          # 0: no limit known
    const_default: int = 0
    indirect: bool = False
    direct_counter: int = 0
    direct_meter: int = 0
    idle_timeout: bool = False
    const_table: bool = False
    initial_default: int = 0
    needs_priority: bool = field(init=False)

    def __post_init__(self) -> None:
        self.needs_priority = any(f.match_type in NEEDS_PRIORITY for f in self.fields)


class P4InfoChecks:
    """PI's view of one pushed P4Info: ``table(id)``, ``match_key(table, entry)``,
    ``check_action``, ``action_data``, ``direct_resources``, ``check_ttl``, ``read_form``."""

    def __init__(self, p4info: p4info_pb2.P4Info) -> None:
        self.p4info = p4info
        self.ids: set[int] = set()
        for kind in ("tables", "actions", "action_profiles", "counters", "direct_counters", "meters",
                     "direct_meters", "controller_packet_metadata", "value_sets", "registers", "digests"):
            self.ids.update(o.preamble.id for o in getattr(p4info, kind))
        self.params: dict[int, dict[int, int]] = {a.preamble.id: {p.id: p.bitwidth for p in a.params}
                                                  for a in p4info.actions}
        self.counters = {c.preamble.id: (c.size, c.spec.unit) for c in p4info.counters}
        self.meters = {m.preamble.id: m.size for m in p4info.meters}
        self.tables: dict[int, TableInfo] = {}
        for t in p4info.tables:
            res = list(t.direct_resource_ids)
            self.tables[t.preamble.id] = TableInfo(
                t.preamble.id, [FieldInfo(f.id, f.bitwidth, f.match_type) for f in t.match_fields],
                {r.id: r.scope for r in t.action_refs}, t.size, t.const_default_action_id,
                t.implementation_id != 0,
                next((r for r in res if r >> 24 == P4Ids.DIRECT_COUNTER), 0),
                next((r for r in res if r >> 24 == P4Ids.DIRECT_METER), 0),
                t.idle_timeout_behavior == p4info_pb2.Table.NOTIFY_CONTROL, t.is_const_table,
                t.initial_default_action.action_id)

    def valid(self, p4_id: int, prefix: int) -> bool:
        """PI's ``check_p4_id``: the id's kind (its top byte) is ``prefix`` and the P4Info has it."""
        return p4_id >> 24 == prefix and p4_id in self.ids

    def table(self, table_id: int) -> TableInfo:
        if not self.valid(table_id, P4Ids.TABLE):
            raise Refused(INVALID, INVALID_ID)
        return self.tables[table_id]

    # -- construct_match_key ----------------------------------------------------------------
    def match_key(self, t: TableInfo, te: p4runtime_pb2.TableEntry) -> tuple:
        """The entry's key as PI holds it (values at full width, priority only where it counts)."""
        if te.is_default_action:
            if len(te.match):
                raise Refused(INVALID, "Non-empty key for default entry")
            if te.priority != 0:
                raise Refused(INVALID, "Non-zero priority for default entry")
            return (t.id, "default")
        if len(te.match) > len(t.fields):
            raise Refused(INVALID, "Too many fields in match key")
        key, matched = [], 0
        for f in t.fields:
            mf = next((m for m in te.match if m.field_id == f.id), None)
            if mf is None:
                key.append(_dont_care(f))
                continue
            matched += 1
            key.append(_field_key(f, mf))
        if matched != len(te.match):
            raise Refused(INVALID, "Unknown field in match key")
        if not t.needs_priority and te.priority > 0:
            raise Refused(INVALID, "Non-zero priority for non-ternary match")
        if t.needs_priority and te.priority == 0:
            raise Refused(INVALID, "Zero priority for ternary match")
        if t.needs_priority and te.priority < 0:    # the fake's own check: PI hands it to BMv2, which asserts
            raise Refused(INVALID, "Negative priority (PI passes it on and BMv2 aborts on it)")
        return (t.id, tuple(key), te.priority if t.needs_priority else 0)

    # -- validate_action ------------------------------------------------------------------
    def check_action(self, t: TableInfo, te: p4runtime_pb2.TableEntry) -> None:
        if t.indirect and te.is_default_action:
            raise Refused(INVALID, f"Cannot set / reset default action for indirect table {t.id}")
        if te.is_default_action and t.const_default:
            raise Refused(code_pb2.PERMISSION_DENIED, f"Cannot set / reset default action for table {t.id} "
                                                      f"which has a const default action")
        if not te.HasField("action"):
            return
        kind = te.action.WhichOneof("type")
        if t.indirect and kind == "action":
            raise Refused(INVALID, f"Cannot provide direct action for indirect table {t.id}")
        if not t.indirect and kind != "action":
            raise Refused(INVALID, f"Cannot provide indirect action for direct table {t.id}")
        if t.indirect:
            return
        action_id = te.action.action.action_id
        if not self.valid(action_id, P4Ids.ACTION):
            raise Refused(INVALID, INVALID_ID)
        scope = t.actions.get(action_id)
        if scope is None:
            raise Refused(INVALID, "Invalid action for table")
        if scope == SCOPE.TABLE_ONLY and te.is_default_action:
            raise Refused(code_pb2.PERMISSION_DENIED, "Cannot use TABLE_ONLY action as default action")
        if scope == SCOPE.DEFAULT_ONLY and not te.is_default_action:
            raise Refused(code_pb2.PERMISSION_DENIED, "Cannot use DEFAULT_ONLY action in table entry")

    def action_data(self, action: p4runtime_pb2.Action) -> dict[int, bytes]:
        """PI's ``construct_action_data``: parameter id -> value at full width. PI counts the
        parameters, then checks each id; a parameter given twice in place of another passes (the
        missing one is 0), as in PI."""
        params = self.params[action.action_id]
        if len(action.params) != len(params):
            raise Refused(INVALID, "Unexpected number of action parameters")
        data = {pid: bytes((bw + 7) // 8) for pid, bw in params.items()}
        for p in action.params:
            bw = params.get(p.param_id)
            if bw is None:
                raise Refused(INVALID, "Unknown action parameter")
            data[p.param_id] = to_pi(p.value, bw)
        return data

    def direct_resources(self, t: TableInfo, te: p4runtime_pb2.TableEntry) -> None:
        if te.HasField("meter_config"):
            if not t.direct_meter:
                raise Refused(INVALID, "Table has no direct meters")
            check_meter_config(te.meter_config)
        if te.HasField("counter_data") and not t.direct_counter:
            raise Refused(INVALID, "Table has no direct counters")

    @staticmethod
    def check_ttl(t: TableInfo, te: p4runtime_pb2.TableEntry) -> None:
        if te.idle_timeout_ns < 0:
            raise Refused(INVALID, "idle_timeout_ns must be a positive value")
        if te.idle_timeout_ns > 0 and not t.idle_timeout:
            raise Refused(INVALID, "idle_timeout_ns must be set to 0 for tables which do not support idle timeout")

    # -- reading back (parse_match_key, parse_action_data) ----------------------------------
    def read_form(self, te: p4runtime_pb2.TableEntry, key: tuple) -> p4runtime_pb2.TableEntry:
        """The entry as PI reads it back: fields in P4Info order, "don't care" ones omitted, values
        without leading zero bytes, parameters in P4Info order."""
        t = self.tables[te.table_id]
        out = p4runtime_pb2.TableEntry(table_id=te.table_id, controller_metadata=te.controller_metadata,
                                       metadata=te.metadata, idle_timeout_ns=te.idle_timeout_ns)
        if key[2] > 0:
            out.priority = key[2]
        for f, k in zip(t.fields, key[1]):
            if _read_omits(f, k):
                continue
            mf = out.match.add(field_id=f.id)
            if f.match_type == MT.LPM:
                mf.lpm.value, mf.lpm.prefix_len = to_p4rt(k[0]), k[1]
            elif f.match_type == MT.TERNARY:
                mf.ternary.value, mf.ternary.mask = to_p4rt(k[0]), to_p4rt(k[1])
            elif f.match_type == MT.RANGE:
                mf.range.low, mf.range.high = to_p4rt(k[0]), to_p4rt(k[1])
            elif f.match_type == MT.OPTIONAL:
                mf.optional.value = to_p4rt(k[0])
            else:
                mf.exact.value = to_p4rt(k[0])
        self._read_action(te, out)
        return out

    def default_read_form(self, table_id: int, te: p4runtime_pb2.TableEntry | None) -> p4runtime_pb2.TableEntry:
        """A table's default entry as PI reads it: the one a controller set, else the program's."""
        out = p4runtime_pb2.TableEntry(table_id=table_id, is_default_action=True)
        if te is not None:
            out.controller_metadata, out.metadata = te.controller_metadata, te.metadata
            self._read_action(te, out)
        elif self.tables[table_id].initial_default:
            out.action.action.action_id = self.tables[table_id].initial_default
        return out

    def _read_action(self, te: p4runtime_pb2.TableEntry, out: p4runtime_pb2.TableEntry) -> None:
        if te.action.WhichOneof("type") == "action":
            a = te.action.action
            out.action.action.action_id = a.action_id
            for pid, value in self.action_data(a).items():
                out.action.action.params.add(param_id=pid, value=to_p4rt(value))
        else:
            out.action.CopyFrom(te.action)


def _range_hi(nbits: int) -> bytes:
    return ((1 << nbits) - 1).to_bytes((nbits + 7) // 8, "big")


def _dont_care(f: FieldInfo) -> tuple:
    zeros = bytes(f.nbytes)
    if f.match_type == MT.LPM:
        return (zeros, 0)
    if f.match_type == MT.RANGE:
        return (zeros, _range_hi(f.bitwidth))
    if f.match_type in (MT.TERNARY, MT.OPTIONAL):
        return (zeros, zeros)
    raise Refused(INVALID, "Missing non-ternary field in match key")


def _read_omits(f: FieldInfo, k: tuple) -> bool:
    """Whether PI's ``parse_match_key`` leaves the field out. For a range it tests the full range of the
    padded bytes, so a 9-bit range field left out on write reads back as [0, 511] (kept, as PI)."""
    zeros = bytes(f.nbytes)
    if f.match_type == MT.LPM:
        return k[1] == 0
    if f.match_type in (MT.TERNARY, MT.OPTIONAL):
        return k[1] == zeros
    if f.match_type == MT.RANGE:
        return k[0] == zeros and k[1] == b"\xff" * f.nbytes
    return False


_KINDS: dict[int, str] = {MT.LPM: "lpm", MT.TERNARY: "ternary", MT.RANGE: "range", MT.OPTIONAL: "optional"}


def _field_key(f: FieldInfo, mf: p4runtime_pb2.FieldMatch) -> tuple:
    kind = mf.WhichOneof("field_match_type")
    want = _KINDS.get(f.match_type, "exact")
    if kind != want:
        raise Refused(INVALID, "Invalid match type")
    bw = f.bitwidth
    if kind == "exact":
        return (to_pi(mf.exact.value, bw),)
    if kind == "optional":
        return (to_pi(mf.optional.value, bw), b"\xff" * f.nbytes)
    if kind == "lpm":
        value, plen = to_pi(mf.lpm.value, bw), mf.lpm.prefix_len
        if plen < 0:
            raise Refused(INVALID, "Prefix length cannot be < 0")
        if plen > bw:
            raise Refused(INVALID, "Prefix length cannot be > bitwidth")
        if plen == 0:
            raise Refused(INVALID, "Invalid reprsentation of 'don't care' LPM match, omit match field instead "
                                   "of using a prefix length of 0")     # sic, PI's spelling
        if not _lpm_trailing_zeros_ok(value, plen):
            raise Refused(INVALID, "Invalid LPM value, incorrect number of trailing zeros")
        return (value, plen)
    if kind == "ternary":
        value, mask = to_pi(mf.ternary.value, bw), to_pi(mf.ternary.mask, bw)
        if not any(mf.ternary.mask):           # PI looks at the mask as sent: b"" is a 0 mask too
            raise Refused(INVALID, "Invalid representation of 'don't care' ternary match, omit match field "
                                   "instead of using 0 mask")
        if any(v & m != v for v, m in zip(value, mask)):
            raise Refused(INVALID, "Invalid ternary value, make sure value & mask == value")
        return (value, mask)
    low, high = to_pi(mf.range.low, bw), to_pi(mf.range.high, bw)
    raw_low, raw_high = mf.range.low, mf.range.high     # PI compares the bytes as sent, at their own width
    if raw_low == bytes(len(raw_low)) and raw_high == _range_hi(len(raw_low) * 8):
        raise Refused(INVALID, "Invalid representation of 'don't care' range match, omit match field instead "
                               "of using low=0 and high=2**bitwidth-1")
    if low > high:
        raise Refused(INVALID, "Invalid range value, make sure low <= high")
    return (low, high)


def check_meter_config(config: p4runtime_pb2.MeterConfig) -> None:
    """PI's ``validate_meter_spec``: -1 means "unset"; anything lower is refused."""
    for name, label in (("cir", "CIR"), ("cburst", "CBurst"), ("pir", "PIR"), ("pburst", "PBurst")):
        if getattr(config, name) < -1:
            raise Refused(INVALID, f"Negative meter {label}")
    if config.cburst > 0xFFFFFFFF:
        raise Refused(code_pb2.UNIMPLEMENTED, "CBurst too large")
    if config.pburst > 0xFFFFFFFF:
        raise Refused(code_pb2.UNIMPLEMENTED, "Pburst too large")
