"""The struct-built frame templates are byte for byte what scapy builds."""

from hypothesis import given, settings
from hypothesis import strategies as st
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from dcnlab.traffic import wire
from dcnlab.traffic.frames import udp_frame

macs = st.binary(min_size=6, max_size=6).map(lambda b: ":".join(f"{x:02x}" for x in b))
ips = st.binary(min_size=4, max_size=4).map(lambda b: ".".join(str(x) for x in b))
ports = st.integers(0, 65535)


@settings(max_examples=300, deadline=None)
@given(macs, macs, ips, ips, ports, ports, st.integers(wire.MIN_FRAME, 1500), st.integers(0, 3),
       st.integers(0, 2**16 - 1))
def test_template_equals_scapy(smac, dmac, sip, dip, sport, dport, size, ecn, flow):
    pad = b"\0" * (size - wire.MIN_FRAME)
    ref = bytes(Ether(src=smac, dst=dmac) / IP(src=sip, dst=dip, tos=ecn, ttl=64)
                / UDP(sport=sport, dport=dport, chksum=0) / (wire.pack(flow, 0, 0) + pad))
    assert udp_frame(smac, dmac, sip, dip, sport, dport, size, ecn, flow) == ref
