"""``dcnlab plan ...``: bad inputs are refused before anything expensive is built.

Each case replaces the command's expensive builder with a sentinel that fails the test if reached, so
what is checked is the order (the input check came first), not a time.
"""

from __future__ import annotations

import json

import pytest

from dcnlab.cli import main


def _reached(what: str):
    def sentinel(*a: object, **k: object) -> None:
        raise AssertionError(f"{what} was built before the input was checked")
    return sentinel


def _refused(capsys, argv: list[str], message: str) -> str:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("dcnlab: error:") and message in err and len(err.splitlines()) == 1
    return err


@pytest.fixture
def no_fabric(monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither the fabric nor its multicast hierarchy may be built."""
    monkeypatch.setattr("dcnlab.topos.spec.parse_spec", _reached("the fabric"))
    monkeypatch.setattr("dcnlab.controller.multicast.hierarchy.hierarchy_for", _reached("the hierarchy"))


def _groups(tmp_path, groups) -> str:
    path = tmp_path / "groups.json"
    path.write_text(json.dumps(groups))
    return str(path)


def test_multicast_groups_file_with_a_member_twice_fails_before_the_fabric(capsys, tmp_path, no_fabric):
    """The issue's file: all 32,768 midplane terminals in one group, the last one twice."""
    names = [f"h{a}_{b}_{c}" for a in range(64) for b in range(32) for c in range(16)]
    path = _groups(tmp_path, [{"mgid": 1, "members": [*names, names[-1]]}])
    _refused(capsys, ["plan", "multicast", "--groups", path], "item 0 (mgid 1): member 'h63_31_15' is listed twice")


@pytest.mark.parametrize("groups,message", [
    ([{"mgid": 1, "members": ["h0_0_0"]}, {"mgid": 1, "members": ["h0_0_1"]}], "item 1: mgid 1 appears twice"),
    ([{"mgid": 70000, "members": ["h0_0_0"]}], "mgid must be a non-negative integer of 16 bits"),
    ([{"mgid": 1, "members": []}], "members must be a non-empty list of terminal names"),
    ([{"mgid": 1, "members": ["h0_0_0", "x" * 5000, "x" * 5000]}], "(5000 characters) is listed twice"),
    ({"mgid": 1}, "expected a JSON list"),
])
def test_multicast_groups_file_shape_fails_before_the_fabric(capsys, tmp_path, no_fabric, groups, message):
    _refused(capsys, ["plan", "multicast", "--groups", _groups(tmp_path, groups)], message)


def test_multicast_groups_file_size_is_bounded_before_the_fabric(capsys, tmp_path, no_fabric, monkeypatch):
    from dcnlab.controller.multicast import workload
    monkeypatch.setattr(workload, "MAX_PROCESSES", 5)
    path = _groups(tmp_path, [{"mgid": 1, "members": ["h0_0_0", "h0_0_1", "h0_0_2"]},
                              {"mgid": 2, "members": ["h0_1_0", "h0_1_1", "h0_1_2"]}])
    _refused(capsys, ["plan", "multicast", "--groups", path], "item 1 (mgid 2): more than 5 members over all groups")


def test_multicast_bad_pattern_fails_before_the_fabric(capsys, no_fabric):
    _refused(capsys, ["plan", "multicast", "--pattern", "4x4:ppn=0"], "ppn=0 is out of range")


def test_multicast_unknown_member_still_named_with_the_file(capsys, tmp_path):
    """Names are resolved against the fabric (after it is built), one error line naming file and item."""
    path = _groups(tmp_path, [{"mgid": 3, "members": ["h0_0_0", "\x1b[2Jh9"]}])
    err = _refused(capsys, ["plan", "multicast", "--topo", "fattree:k=4", "--groups", path],
                   "item 0 (mgid 3): unknown member '\\x1b[2Jh9'")
    assert "\x1b" not in err


@pytest.mark.parametrize("members,message", [
    (["--receiver", "v0", "--senders", "v1,v2,nobody"], "sender 'nobody' is not a server"),
    (["--receiver", "v0", "--senders", "v1,v2,v1"], "senders: duplicate v1"),
    (["--receiver", "v0", "--senders", "v1,v0"], "v0: a receiver cannot also be a sender"),
    (["--shuffle", "--receivers", "v3,v3", "--senders", "v1"], "receivers: duplicate v3"),
    (["--receiver", "w0", "--senders", "v1", "--algo", "optimal"], "receiver 'w0' is a switch"),
])
def test_aggregation_members_fail_before_any_tree(capsys, monkeypatch, members, message):
    from dcnlab.controller import aggregation as agg
    monkeypatch.setattr(agg, "incast_tree", _reached("a tree"))
    monkeypatch.setattr(agg, "shuffle_plan", _reached("a shuffle"))
    _refused(capsys, ["plan", "aggregation", "--topo", "bcube:n=4,k=1", *members], message)


def test_cist_unknown_failure_fails_before_the_trees(capsys, monkeypatch):
    monkeypatch.setattr("dcnlab.controller.cist.cist_partition", _reached("the CIST-partition"))
    monkeypatch.setattr("dcnlab.controller.cist.plan.cist_partition", _reached("the CIST-partition"))
    monkeypatch.setattr("dcnlab.controller.cist.plan_from_partition", _reached("the trees"))
    _refused(capsys, ["plan", "cist", "--topo", "dragonfly:p=1,a=4,h=2", "--fail", "s0_0,bogus"],
             "failure 'bogus': no such switch")


def test_cist_failures_still_reported(capsys):
    assert main(["plan", "cist", "--topo", "dragonfly:p=1,a=4,h=2", "--fail", "s0_0", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["failures"]["given"]["failed"] == ["s0_0"]


def test_congestion_duplicate_tenants_fail_before_the_policy(capsys, monkeypatch):
    monkeypatch.setattr("dcnlab.controller.congestion.policy.TenantPolicy", _reached("the policy"))
    tenants = [arg for i in range(2000) for arg in ("--tenant", f"t{i}:1:1")]
    _refused(capsys, ["plan", "congestion", *tenants, "--tenant", "t1999:1:2"],
             "tenant names must be unique; given more than once: 't1999'")
