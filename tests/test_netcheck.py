"""The BMv2 tests' namespace check looks only at dcnlab's interfaces (tests/netcheck.py)."""

import pytest

import netcheck


def test_only_dcnlab_names_count_and_only_of_the_given_nodes():
    names = {"dcm03c731", "eth0", "ifb1", "s1-eth1", "h0_0_0-eth0", "a0_1-eth3", "veth12ab"}
    assert netcheck._ours(names, None) == {"s1-eth1", "h0_0_0-eth0", "a0_1-eth3"}
    assert netcheck._ours(names, {"s1", "e0_0"}) == {"s1-eth1"}


def test_a_left_interface_fails_after_the_guard(monkeypatch):
    monkeypatch.setattr(netcheck, "root_interfaces", lambda: {"lo", "s9-eth1", "dcm1"})
    netcheck.assert_none_left({"lo"}, nodes={"s1"}, guard=0)             # another run's, another test's
    with pytest.raises(AssertionError, match=r"\['s9-eth1'\] left there"):
        netcheck.assert_none_left({"lo"}, guard=0)
