"""A finsy controller for topology.json here (examples/programs/router.p4 on s1 and s2).

It becomes primary on each switch, pushes the program and installs the routes below, then stays
connected (Ctrl-C or SIGTERM ends it). Give it the compiled program and each switch's P4Runtime
endpoint (``dcnlab run topology.json --no-controller`` prints them; ``unix:/...`` or ``host:port``)::

    python controller.py --p4info router.p4info.txtpb --p4blob router.json \\
        s1@0=unix:/run/dcnlab/RUN/sockets/sw0.sock s2@1=unix:/run/dcnlab/RUN/sockets/sw1.sock
"""

from __future__ import annotations

import argparse
from pathlib import Path

import finsy as fy

# Per switch: (destination prefix, output port, next hop's MAC, this router's MAC on that port).
ROUTES = {
    "s1": [("10.0.1.1/32", 1, "08:00:00:00:01:11", "00:00:00:00:01:00"),
           ("10.0.2.0/24", 2, "08:00:00:00:02:22", "00:00:00:00:01:00"),
           ("10.0.3.0/24", 2, "08:00:00:00:03:33", "00:00:00:00:01:00")],
    "s2": [("10.0.2.2/32", 1, "08:00:00:00:02:22", "00:00:00:00:02:00"),
           ("10.0.3.3/32", 3, "08:00:00:00:03:33", "00:00:00:00:02:00"),
           ("10.0.1.0/24", 2, "08:00:00:00:01:11", "00:00:00:00:02:00")],
}


async def ready(sw: fy.Switch) -> None:
    """Called by finsy once this controller is primary and the pipeline is in."""
    await sw.write([
        +fy.P4TableEntry("RIngress.routes", match=fy.P4TableMatch({"hdr.ipv4.dst": prefix}),
                         action=fy.P4TableAction("RIngress.forward", dst_mac=dst, src_mac=src, port=port))
        for prefix, port, dst, src in ROUTES[sw.name]])
    print(f"{sw.name}: {len(ROUTES[sw.name])} routes installed", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--p4info", type=Path, required=True)
    ap.add_argument("--p4blob", type=Path, required=True, help="the BMv2 JSON")
    ap.add_argument("--election-id", type=int, default=10)
    ap.add_argument("switches", nargs="+", metavar="NAME@DEVICE_ID=TARGET")
    a = ap.parse_args()
    opts = fy.SwitchOptions(p4info=a.p4info, p4blob=a.p4blob, initial_election_id=a.election_id,
                            ready_handler=ready)
    switches = []
    for spec in a.switches:
        name_dev, target = spec.split("=", 1)
        name, dev = name_dev.split("@")
        switches.append(fy.Switch(name, target, opts(device_id=int(dev))))
    fy.run(fy.Controller(switches).run())


if __name__ == "__main__":
    main()
