"""``dcnlab bench chaos`` judges only what the killed run or its clean changed (no BMv2 needed).

Seen in the BMv2 suite while a second test suite ran on the machine: its test machines' veths (``dcm<token>``)
came and went during a chaos cycle and were counted as the clean's doing."""

from dcnlab.bench.chaos import MachineState

BASE = {"lo", "eth0", "e0_0-eth0", "c0-eth0", "dcm03c731"}
NODES = {"v0", "v1", "w0", "w1"}


def state(interfaces, namespaces=(), firewall=""):
    return MachineState(set(interfaces), set(namespaces), firewall)


def test_other_work_s_interfaces_coming_and_going_are_not_changes():
    before = state(BASE)
    after = state((BASE - {"dcm03c731"}) | {"dcm8088e8", "veth1a2b", "h1-eth0"})   # h1 is not of this fabric
    assert after.changes_since(before, NODES) == []


def test_an_interface_of_the_run_left_behind_is_a_change():
    assert state(BASE | {"v1-eth0"}).changes_since(state(BASE), NODES) == ["interfaces of the run left: ['v1-eth0']"]


def test_an_interface_named_like_dcnlab_s_deleted_is_a_change():
    """What a clean that deletes by name would hit (the canary veth ``e0_0-eth0`` is such a one)."""
    assert state(BASE - {"e0_0-eth0"}).changes_since(state(BASE), NODES) == ["interfaces deleted: ['e0_0-eth0']"]


def test_namespaces_and_firewall_still_count():
    before = state(BASE, {"blue"}, "-P INPUT ACCEPT")
    after = state(BASE, set(), "-P INPUT DROP")
    assert after.changes_since(before, NODES) == ["namespaces ['blue']", "firewall rules changed"]
