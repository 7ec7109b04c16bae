"""``dcnlab view RUN_DIR``: the view of a run another dcnlab process keeps up.

The run's ``state.json`` names its fabric spec and namespace, ``endpoints.json`` each switch's
P4Runtime and Thrift endpoints. Counters come from the namespace as for a run's own view. A switch is
read back over P4Runtime without a stream: a Read (and GetForwardingPipelineConfig for the P4Info)
needs no arbitration, so the view never contends with the primary controller nor becomes one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dcnlab.topos.errors import UserError
from dcnlab.topos.inputs import show_path
from dcnlab.view.drops import DropSample, take_drops
from dcnlab.view.sources import LiveSource, Reader, read_switch, thrift_registers

READ_TIMEOUT = 5.0


def load_run(path: str | Path) -> tuple[Any, str, list[dict[str, Any]]]:
    """(fabric, namespace, endpoints) of a live run directory; one line naming what is missing, or the
    run file that is damaged and how."""
    from dcnlab.emu import netns as netns_mod
    from dcnlab.emu.rundir import RunDir
    from dcnlab.topos.inputs import quote
    from dcnlab.topos.spec import parse_spec

    p = Path(path)
    try:
        is_run = (p / "state.json").is_file()
    except OSError as e:        # a name too long, a loop of symlinks, ...: no run directory either
        raise UserError(f"view: {quote(str(path), 200)} cannot be read ({e.strerror}); valid: a directory under "
                        f"/var/tmp/dcnlab/runs that 'dcnlab run' printed") from None
    if not is_run:
        raise UserError(f"view: {quote(str(path), 200)} is not a run directory (no state.json); valid: a directory "
                        f"under /var/tmp/dcnlab/runs that 'dcnlab run' printed")
    try:
        run = RunDir.load(p)
    except UserError as e:
        raise UserError(f"view: {e}") from None
    ns = run.state.netns
    if run.state.finished or not ns:
        raise UserError(f"view: the run {quote(run.id, 80)} is not up (finished, or its namespace not yet made)")
    if not _NETNS.fullmatch(ns) or ns in (".", ".."):
        raise UserError(f"view: run file '{show_path(p / 'state.json')}': field 'netns' is {quote(ns)}; valid: a "
                        f"namespace name (letters, digits, '.', '_', '-')")
    if not netns_mod.exists(ns):
        raise UserError(f"view: the run {quote(run.id, 80)} is not up: its network namespace {quote(ns)} no longer "
                        f"exists (the run ended without saying so; 'dcnlab clean' tidies its directory)")
    try:
        fabric = parse_spec(run.state.spec)
    except Exception:     # noqa: BLE001 - a fabric from a user's file has no spec to rebuild it from
        raise UserError(f"view: the run's fabric {quote(run.state.spec, 80)} was not made from a spec; view it "
                        f"from the run itself (dcnlab run FILE --view)") from None
    return fabric, ns, load_endpoints(p / "endpoints.json")


_NETNS = re.compile(r"[A-Za-z0-9_.-]{1,255}")
_ENDPOINT_FIELDS: dict[str, tuple[type, ...]] = {"switch": (str,), "device_id": (int,), "grpc": (str,),
                                                 "grpc_tcp": (str, type(None)), "thrift_port": (int,), "netns": (str,)}


def load_endpoints(file: Path) -> list[dict[str, Any]]:
    """A run's ``endpoints.json`` (none yet: no endpoints), each entry checked for the fields the view
    reads; one line naming the file, the entry and the field otherwise."""
    from dcnlab.topos.inputs import quote, read_json

    if not file.is_file():
        return []
    try:
        eps = read_json(file, "run file")
    except UserError as err:
        raise UserError(f"view: {err}") from None
    where = f"view: run file '{show_path(file)}'"
    if not isinstance(eps, list):
        raise UserError(f"{where}: not a JSON list of endpoints; valid: what 'dcnlab run' writes")
    for i, e in enumerate(eps):
        if not isinstance(e, dict):
            raise UserError(f"{where}: endpoint {i} is {quote(e)}; valid: an object with "
                            f"{', '.join(_ENDPOINT_FIELDS)}")
        for name, types in _ENDPOINT_FIELDS.items():
            if name not in e and name != "grpc_tcp":
                raise UserError(f"{where}: endpoint {i} has no {name!r}; valid: an object with "
                                f"{', '.join(_ENDPOINT_FIELDS)}")
            v = e.get(name)
            if not isinstance(v, types) or isinstance(v, bool):
                raise UserError(f"{where}: endpoint {i}'s {name!r} is {quote(v)}; valid: "
                                f"{' or '.join('null' if t is type(None) else t.__name__ for t in types)}")
    return [e | {"grpc_tcp": e.get("grpc_tcp")} for e in eps]


def endpoint_reader(endpoints: list[dict[str, Any]]) -> Reader:
    """Read a switch over P4Runtime (no stream, no arbitration) and its registers over Thrift."""
    by_name = {e["switch"]: e for e in endpoints}

    def read(name: str) -> dict[str, Any]:
        import grpc

        from dcnlab.controller.runtime.entities import Counter, TableEntry
        from dcnlab.controller.runtime.p4info import P4Info
        from dcnlab.controller.runtime.proto import p4runtime_pb2, p4runtime_pb2_grpc
        from dcnlab.controller.runtime.thrift import ThriftChannel

        e = by_name.get(name)
        if e is None:
            return {"switch": name, "note": "no endpoint recorded for this node"}
        with grpc.insecure_channel(e["grpc_tcp"] or e["grpc"]) as ch:
            stub = p4runtime_pb2_grpc.P4RuntimeStub(ch)
            R = p4runtime_pb2.GetForwardingPipelineConfigRequest
            rep = stub.GetForwardingPipelineConfig(R(device_id=e["device_id"], response_type=R.P4INFO_AND_COOKIE),
                                                   timeout=READ_TIMEOUT)
            info = P4Info(rep.config.p4info)

            def entities(ent: Any) -> list[Any]:
                req = p4runtime_pb2.ReadRequest(device_id=e["device_id"])
                ent.fill(info, req.entities.add())
                return [x for r in stub.Read(req, timeout=READ_TIMEOUT) for x in r.entities]

            return read_switch(name, info,
                               lambda t: [TableEntry.from_proto(info, x.table_entry) for x in entities(TableEntry(t))],
                               lambda c: [Counter.from_proto(info, x.counter_entry) for x in entities(Counter(c))],
                               thrift_registers(ThriftChannel(name, e["thrift_port"], netns=e["netns"])))
    return read


def endpoint_drops(endpoints: list[dict[str, Any]]) -> Callable[[], DropSample]:
    """Every switch's drop counters (:mod:`dcnlab.view.drops`) over P4Runtime reads, no stream; a switch's
    P4Info is fetched once."""
    import time

    import grpc

    from dcnlab.controller.runtime.entities import Counter
    from dcnlab.controller.runtime.p4info import P4Info
    from dcnlab.controller.runtime.proto import p4runtime_pb2, p4runtime_pb2_grpc
    by_name = {e["switch"]: e for e in endpoints}
    infos: dict[str, Any] = {}

    def stub_of(sw: str) -> tuple[Any, Any]:
        e = by_name[sw]
        ch = grpc.insecure_channel(e["grpc_tcp"] or e["grpc"])
        return ch, p4runtime_pb2_grpc.P4RuntimeStub(ch)

    def info(sw: str) -> Any:
        if sw not in infos:
            ch, stub = stub_of(sw)
            with ch:
                R = p4runtime_pb2.GetForwardingPipelineConfigRequest
                rep = stub.GetForwardingPipelineConfig(R(device_id=by_name[sw]["device_id"], response_type=R.P4INFO_AND_COOKIE),
                                                       timeout=READ_TIMEOUT)
            infos[sw] = P4Info(rep.config.p4info)
        return infos[sw]

    def read(sw: str, counter: str) -> list[Any]:
        p4 = info(sw)
        ch, stub = stub_of(sw)
        with ch:
            req = p4runtime_pb2.ReadRequest(device_id=by_name[sw]["device_id"])
            Counter(counter).fill(p4, req.entities.add())
            return [Counter.from_proto(p4, x.counter_entry) for r in stub.Read(req, timeout=READ_TIMEOUT)
                    for x in r.entities]
    return lambda: take_drops(list(by_name), lambda sw: info(sw).externs["counter"], read, time.monotonic)


def run_source(path: str | Path) -> LiveSource:
    """A run's view; an experiment's tenants' flows too, where it publishes them in the run directory
    (:data:`dcnlab.view.flows.PUBLISHED`, e.g. ``reproduce congestion --emulate``)."""
    from dcnlab.view.flows import PUBLISHED
    fabric, netns, eps = load_run(path)
    return LiveSource(fabric, netns, endpoint_reader(eps), flows_file=Path(path) / PUBLISHED,
                      drops=endpoint_drops(eps) if eps else None)
