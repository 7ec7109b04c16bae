"""A small P4Runtime controller written with finsy, for examples/programs/router.p4.

It connects to one switch, becomes primary, pushes the pipeline (P4Info + BMv2 JSON) and
installs IPv4 routes in the LPM table ``RIngress.routes``. ``test_my_controller.py`` unit-tests
it against dcnlab's in-process fake P4Runtime server (no BMv2 needed)::

    python my_controller.py TARGET P4INFO BMV2_JSON [--device-id N] PREFIX=PORT,DST_MAC,SRC_MAC ...

where TARGET is a gRPC target: ``unix:/path/to/socket`` or ``host:port``.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import finsy as fy

ROUTES_TABLE = "RIngress.routes"


@dataclass(frozen=True)
class Route:
    prefix: str          # "10.0.2.0/24"
    port: int
    dst_mac: str         # the next hop's MAC (the packet's new destination)
    src_mac: str         # this router's MAC on that port

    @classmethod
    def parse(cls, text: str) -> Route:
        prefix, rest = text.split("=", 1)
        port, dst_mac, src_mac = rest.split(",")
        return cls(prefix, int(port), dst_mac, src_mac)


def route_entry(r: Route) -> fy.P4TableEntry:
    return fy.P4TableEntry(
        ROUTES_TABLE,
        match=fy.P4TableMatch({"hdr.ipv4.dst": r.prefix}),
        action=fy.P4TableAction("RIngress.forward", dst_mac=r.dst_mac, src_mac=r.src_mac, port=r.port),
    )


def options(p4info: Path, p4blob: Path, device_id: int = 0, election_id: int = 10) -> fy.SwitchOptions:
    return fy.SwitchOptions(p4info=Path(p4info), p4blob=Path(p4blob), device_id=device_id,
                            initial_election_id=election_id)


async def configure(target: str, opts: fy.SwitchOptions, routes: Iterable[Route], name: str = "sw") -> None:
    """Become primary on ``target``, push the pipeline if it differs, insert ``routes``."""
    async with fy.Switch(name, target, opts) as sw:
        if not sw.is_primary:
            raise RuntimeError(f"{name}: another controller is primary")
        await sw.write([+route_entry(r) for r in routes])      # +entry: INSERT


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("target")
    ap.add_argument("p4info", type=Path)
    ap.add_argument("p4blob", type=Path)
    ap.add_argument("routes", nargs="*", type=Route.parse)
    ap.add_argument("--device-id", type=int, default=0)
    a = ap.parse_args(argv)
    asyncio.run(configure(a.target, options(a.p4info, a.p4blob, a.device_id), a.routes))


if __name__ == "__main__":
    main()
