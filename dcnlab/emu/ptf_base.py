"""A base class for PTF tests run by ``dcnlab ptf``: PTF's dataplane and a P4Runtime session on the switch.

Inside a PTF test module (PTF imports it; it needs PTF installed)::

    import ptf.testutils as tu
    from dcnlab.emu.ptf_base import P4RuntimeTest

    class Forward(P4RuntimeTest):
        def runTest(self):
            self.sw.write(+TableEntry("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": ("10.0.2.0", 24)}, ...))
            tu.send_packet(self, 1, pkt)
            tu.verify_packets(self, expected, [2])

``self.sw`` is a :class:`~dcnlab.emu.ptf_switch.SwitchSession` opened from the test parameters dcnlab passes
(it pushes the pipeline unless ``keep_pipeline`` is set); ``self.dataplane`` is PTF's, flushed.
"""

from __future__ import annotations

import ptf
from ptf.base_tests import BaseTest

from dcnlab.emu.ptf_switch import SwitchSession


class P4RuntimeTest(BaseTest):
    def setUp(self) -> None:
        BaseTest.setUp(self)
        self.dataplane = ptf.dataplane_instance
        self.dataplane.flush()
        self.sw = SwitchSession.from_test_params()

    def tearDown(self) -> None:
        self.sw.close()
        BaseTest.tearDown(self)
