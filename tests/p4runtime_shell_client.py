"""A p4runtime-shell session against a P4Runtime server, for tests/test_fake_strict.py.

Run with an interpreter that has p4runtime-shell (``pip install p4runtime-shell``; it pins its own
protobuf, so usually a venv of its own): ``python p4runtime_shell_client.py ADDR P4INFO BIN``. It
pushes the pipeline of examples/programs/router.p4, inserts, reads, modifies, reads and deletes a
route, then tries the issue's insert (RIngress.forward with one of its three parameters), and
prints what it saw as one JSON object.
"""

import json
import sys

import p4runtime_sh.shell as sh
from p4runtime_sh.p4runtime import P4RuntimeWriteException


def routes() -> list:
    got = []
    def one(e) -> None:
        m = e.match["hdr.ipv4.dst"].lpm
        got.append({"dst": [m.value.hex(), m.prefix_len], "action": e.action.action_name,
                    "params": {p: e.action[p].value.hex() for p in ("dst_mac", "src_mac", "port")}})
    sh.TableEntry("RIngress.routes").read(one)
    return got


def main(addr: str, p4info: str, blob: str) -> None:
    out = {}
    sh.setup(device_id=0, grpc_addr=addr, election_id=(0, 1), config=sh.FwdPipeConfig(p4info, blob), verbose=False)
    try:
        te = sh.TableEntry("RIngress.routes")(action="RIngress.forward")
        te.match["hdr.ipv4.dst"] = "10.0.2.0/24"
        te.action["dst_mac"] = "08:00:00:00:02:22"
        te.action["src_mac"] = "00:00:00:00:01:00"
        te.action["port"] = "2"
        te.insert()
        out["inserted"] = routes()
        te.action["port"] = "3"
        te.modify()
        out["modified"] = routes()
        te.delete()
        out["deleted"] = routes()
        bad = sh.TableEntry("RIngress.routes")(action="RIngress.forward")
        bad.match["hdr.ipv4.dst"] = "10.0.3.0/24"
        bad.action["port"] = "2"
        try:
            bad.insert()
            out["one_param"] = "accepted"
        except P4RuntimeWriteException as e:
            out["one_param"] = str(e)
        out["after"] = routes()
    finally:
        sh.teardown()
    print(json.dumps(out))


if __name__ == "__main__":
    main(*sys.argv[1:4])
