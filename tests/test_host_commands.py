"""A topology file's host ``commands`` have a bounded wait (a command that never ends must not hang the bring-up).

``sleep 1000``, ``cat`` and an unterminated quote hung the bring-up: the commands ran in the host's
shell, and the wait for its prompt had no limit. :class:`dcnlab.emu.hostcmds.HostCommands` runs them
as ``bash -c`` in the host with stdin from /dev/null and a limit per command; these tests run it in
plain network namespaces (entered as dcnlab enters them, with ``nsenter --net``, and with
:func:`dcnlab.emu.hosts.enter_prefix` as the emulation enters a Mininet host), without BMv2, in a chroot
too. The ``bmv2`` test brings up a topology file with such commands and checks the one error line and that
nothing of the run is left.

No test measures time: a command that should come back at once runs under a limit of an hour, so a
wait for the limit would show as this file's hang guard (``pytest.mark.timeout``) firing instead.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from waiting import wait_until

from dcnlab.emu import netns
from dcnlab.emu.cleanup import tagged
from dcnlab.emu.hostcmds import HostCommandError, HostCommands
from dcnlab.emu.hosts import enter_prefix
from dcnlab.emu.options import NetOptions
from dcnlab.emu.preflight import root_is_mount_point
from dcnlab.emu.rundir import TAG_VAR
from dcnlab.topos.errors import UserError

pytestmark = [pytest.mark.netns, pytest.mark.timeout(120)]

HOUR = 3600.0
"""The limit where a command must come back by itself: waiting for it would trip the hang guard."""


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch) -> None:
    """Commands run in the working directory (as in the host shells): files they write land here."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def ns() -> Iterator[str]:
    name = f"dlhc{uuid.uuid4().hex[:8]}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], check=False)


@pytest.fixture
def run_id() -> str:
    """A tag of our own: every process the commands start carries it (what ``dcnlab clean`` looks for)."""
    return f"hostcmds-test-{uuid.uuid4().hex[:8]}"


def runner(tmp_path: Path, run_id: str, timeout: float = HOUR) -> HostCommands:
    return HostCommands(tmp_path, timeout, {TAG_VAR: run_id}, "topo.json")


def enter(ns: str) -> list[str]:
    return netns.exec_prefix(ns)


def error_of(r: HostCommands, jobs) -> str:
    with pytest.raises(HostCommandError) as e:
        r.run(jobs)
    msg = str(e.value)
    assert "\n" not in msg and "\x1b" not in msg, msg
    return msg


def test_a_command_past_the_limit_is_stopped_with_one_line(tmp_path, ns, run_id):
    r = runner(tmp_path, run_id, timeout=3)      # 'true' takes milliseconds
    try:
        msg = error_of(r, {"h1": (enter(ns), ["true", "sleep 1000", "touch never"])})
        assert msg == (f"topo.json: host h1 commands[1] 'sleep 1000': did not finish within 3 s, so it was "
                       f"stopped (a command that should keep running ends with &; output: {tmp_path}/commands-h1.log)")
        assert not tagged(run_id), "the command's process group was not stopped"
    finally:
        r.stop()
    assert not (tmp_path / "never").exists() and not tagged(run_id)


def test_what_a_timed_out_command_started_goes_with_it(tmp_path, ns, run_id):
    r = runner(tmp_path, run_id, timeout=0.5)
    try:
        error_of(r, {"h1": (enter(ns), ["sleep 1001 & sleep 1002; wait"])})
        assert not tagged(run_id)
    finally:
        r.stop()


def test_syntax_error_is_the_shells_message_at_once(tmp_path, ns, run_id):
    r = runner(tmp_path, run_id)
    try:
        msg = error_of(r, {"h1": (enter(ns), ["echo 'abc"])})
    finally:
        r.stop()
    assert msg.startswith("topo.json: host h1 commands[0] \"echo 'abc\": failed (exit status 2): bash: -c: ")
    assert "unexpected EOF while looking for matching" in msg, msg


def test_stdin_is_dev_null(tmp_path, ns, run_id):
    r = runner(tmp_path, run_id)
    try:
        r.run({"h1": (enter(ns), ["cat", "read line; test $? -ne 0", "echo done > out"])})
    finally:
        r.stop()
    assert (tmp_path / "commands-h1.log").read_text() == "$ cat\n$ read line; test $? -ne 0\n$ echo done > out\n"


def test_a_failing_command_names_its_status_and_output_escaped(tmp_path, ns, run_id):
    r = runner(tmp_path, run_id)
    try:
        msg = error_of(r, {"h1": (enter(ns), ["printf 'no route\\n\\033[2J'; exit 3", "touch never"])})
        assert msg == ("topo.json: host h1 commands[0] \"printf 'no route\\\\n\\\\033[2J'; exit 3\": failed "
                       "(exit status 3): no route | \\x1b[2J")
        msg = error_of(runner(tmp_path, run_id), {"h1": (enter(ns), ["x" * 500])})
        assert "commands[0] 'xxxxxxxxxx" in msg and "...' (500 characters)" in msg and "exit status 127" in msg
        msg = error_of(runner(tmp_path, run_id), {"h1": (enter(ns), ["kill -9 $$"])})
        assert "failed (killed by signal 9): no output" in msg
    finally:
        r.stop()
    assert not (tmp_path / "never").exists()


def commands_of(pids: list[int]) -> list[str]:
    """The command lines of ``pids`` (those still there), sorted."""
    out = []
    for pid in pids:
        try:
            out.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip())
        except OSError:
            pass
    return sorted(out)


def test_background_command_runs_on_until_stop(tmp_path, ns, run_id):
    """The two sleeps run on after :meth:`HostCommands.run` returned, until :meth:`HostCommands.stop`.

    When ``run`` returns, each ``&`` job's shell has forked it but the child may still be in ``execve``
    (``nohup`` execs once more): the kernel sets the new program's environment at the end of ``execve``,
    so a ``tagged`` scan then reads an empty /proc/PID/environ and misses it (seen once in eleven runs).
    So the test waits for the sleeps themselves (their command lines, which the kernel writes when their
    ``execve`` is done), with a hang guard, and then requires that both are there and nothing else is."""
    r = runner(tmp_path, run_id)
    r.run({"h1": (enter(ns), ["sleep 1000 &", "nohup sleep 1001 >/dev/null 2>&1 &", "echo after"])})
    try:
        sleeps = ["sleep 1000", "sleep 1001"]
        wait_until(lambda: commands_of(tagged(run_id)) == sleeps, "the two background sleeps run")
        assert commands_of(tagged(run_id)) == sleeps      # every shell has exited; the sleeps run on
        assert (tmp_path / "commands-h1.log").read_text().endswith("$ echo after\nafter\n")
    finally:
        r.stop()
    assert not tagged(run_id)
    r.stop()                                    # twice is fine


def test_commands_run_in_the_host_in_order_hosts_at_once(tmp_path, ns, run_id):
    other = f"{ns}b"
    subprocess.run(["ip", "netns", "add", other], check=True)
    flag = tmp_path / "b-was-here"
    # h1 waits for what h2 does: one host after the other would run past the limit
    r = runner(tmp_path, run_id, timeout=60)
    try:
        r.run({"h1": (enter(ns), ["ip link add hc7a type veth peer name hc7b", f"while [ ! -e {flag} ]; do sleep 0.01; done",
                                  "echo \"$DCNLAB_RUN\" > tag", "ip -o link > links"]),
               "h2": (enter(other), [f"touch {flag}"])})
    finally:
        r.stop()
        subprocess.run(["ip", "netns", "del", other], check=False)
    assert (tmp_path / "tag").read_text().strip() == run_id
    links = (tmp_path / "links").read_text()
    assert "hc7a" in links and len(links.splitlines()) == 3    # lo and the veth pair: the host's, not the machine's


def test_more_hosts_than_run_at_once(tmp_path, ns, run_id):
    hosts = [f"h{i}" for i in range(7)] + ["../odd name"]
    r = runner(tmp_path, run_id)
    try:
        r.run({h: (enter(ns), [f"echo '{h}' >> ran", "echo second >> ran"]) for h in hosts}, parallel=3)
    finally:
        r.stop()
    lines = (tmp_path / "ran").read_text().splitlines()
    assert sorted(lines) == sorted(hosts + ["second"] * len(hosts))
    assert (tmp_path / "commands-.._odd_name.log").is_file()


@pytest.mark.skipif(not root_is_mount_point(), reason="/ is not a mount point (a chroot entered without mount --bind "
                    "DIR DIR): the emulation refuses to start hosts there (dcnlab.emu.preflight.NO_MOUNT_POINT)")
def test_the_emulations_prefix_enters_the_process_namespace(tmp_path, ns, run_id):
    """The emulation enters a Mininet host with :func:`~dcnlab.emu.hosts.enter_prefix` (``nsenter --net --mount
    --root`` into the host shell's pid, in this directory): the commands run in that process's network namespace,
    here and in a chroot alike (``mnexec -a PID``, used before, left a chroot for the machine's root)."""
    holder = subprocess.Popen([*enter(ns), "sleep", "1000"])
    r = runner(tmp_path, run_id, timeout=60)
    try:
        r.run({"h1": (enter_prefix(holder.pid), ["ip link add hc8a type veth peer name hc8b", "pwd > where",
                                                 "sleep 1000 &"])})
        msg = error_of(runner(tmp_path, run_id, timeout=0.5), {"h1": (enter_prefix(holder.pid), ["sleep 1000"])})
        assert "did not finish within 0.5 s" in msg
        shown = subprocess.run(netns.command(ns, "ip", "-o", "link"), capture_output=True, text=True, check=True).stdout
        assert "hc8a" in shown
        assert "hc8a" not in subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, check=True).stdout
        assert (tmp_path / "where").read_text() == f"{tmp_path}\n"
    finally:
        r.stop()
        holder.kill()
        holder.wait()
    assert not tagged(run_id)


def test_the_limit_is_an_option():
    assert NetOptions().host_command_timeout == 10.0
    for bad in (0, -1, 1e9):
        with pytest.raises(UserError, match="host_command_timeout"):
            NetOptions(host_command_timeout=bad).validate()


# -- end to end, on BMv2 ------------------------------------------------------------------------------
LAB = Path(__file__).resolve().parent.parent / "examples" / "router-lab"


@pytest.fixture
def run_root(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "runs"
    monkeypatch.setenv("DCNLAB_RUN_ROOT", str(root))
    return root


def _lab_with_commands(tmp_path: Path, commands: list[str]) -> tuple[Path, str]:
    """A copy of examples/router-lab whose first host also runs ``commands``."""
    lab = Path(shutil.copytree(LAB, tmp_path / "lab"))
    shutil.copytree(LAB.parent / "programs", tmp_path / "programs")
    topo = lab / "topology.json"
    data = json.loads(topo.read_text())
    host = next(iter(data["hosts"]))
    data["hosts"][host]["commands"] = [*data["hosts"][host].get("commands", []), *commands]
    topo.write_text(json.dumps(data))
    return topo, host


@pytest.mark.bmv2
@pytest.mark.parametrize(("command", "words"), [
    ("sleep 1000", "'sleep 1000': did not finish within 2 s, so it was stopped"),
    ("cat; sleep 1000", "'cat; sleep 1000': did not finish within 2 s"),
    ("echo 'abc", "\"echo 'abc\": failed (exit status 2): bash: -c: line 1: unexpected EOF"),
], ids=["sleep", "cat-then-sleep", "quote"])
def test_bring_up_with_a_hanging_host_command_fails_and_tears_down(tmp_path, run_root, command, words):
    from dcnlab.emu.cleanup import leftovers
    from dcnlab.emu.network import FabricNetwork
    from dcnlab.topos.files import load_topology

    topo, host = _lab_with_commands(tmp_path, ["sleep 999 &", command])
    net = FabricNetwork(load_topology(topo), NetOptions(host_command_timeout=2.0))
    with pytest.raises(HostCommandError) as e:
        net.start()
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(f"{topo}: host {host} commands[2] ") and words in msg, msg
    assert net.run is not None and not leftovers(run_root)     # the background sleep went too


@pytest.mark.bmv2
def test_cat_and_a_background_command_bring_up_and_go_at_teardown(tmp_path, run_root):
    from dcnlab.emu.cleanup import leftovers
    from dcnlab.emu.network import FabricNetwork
    from dcnlab.topos.files import load_topology

    topo, host = _lab_with_commands(tmp_path, ["cat", "sleep 1000 &"])
    with FabricNetwork(load_topology(topo), NetOptions(host_command_timeout=HOUR)) as net:
        assert len(tagged(net.run.id)) > 0
        sleeps = [p for p in tagged(net.run.id) if Path(f"/proc/{p}/cmdline").read_bytes() == b"sleep\x001000\x00"]
        assert len(sleeps) == 1
        assert (net.run.path / f"commands-{host}.log").read_text().startswith("$ ip route add")
    assert not leftovers(run_root)
