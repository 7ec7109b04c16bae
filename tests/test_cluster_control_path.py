"""SSH control sockets in a directory of any length.

ssh's ControlMaster binds its control socket as ``ControlPath.<16 random characters>`` before renaming it,
and a Unix socket's path is at most 107 bytes: with the control socket named by its absolute path
(``<run>/m1.0``), a directory of 86 bytes or more made ssh fail (``unix_listener: path ... too long for Unix
domain socket``) although the run directory was short enough for dcnlab's own sockets (``sw65535.sock``:
94 bytes). Every ssh over a master now runs in the control directory with the socket named relative to it."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import sshd_machine
from dcnlab.emu.cluster.remote import SshMaster, SshPool
from dcnlab.emu.rundir import UNIX_PATH_MAX

SSH_TEMP_SUFFIX = len(".") + 16
"""What ssh appends to the ControlPath for the socket it binds first."""
LENGTHS = (40, 85, 86, 94, 95, 107, 200, 400)
"""Directory lengths around ssh's limit (85 was the longest that worked), dcnlab's switch to /run/dcnlab
(sockets of a run directory of 95 bytes or more go there) and the longest a Unix socket takes, and beyond."""


@pytest.fixture
def short() -> Iterator[Path]:
    """A new directory with a short path (``/tmp/dlcp-XXXXXXXX``), whatever the length of pytest's."""
    d = Path(tempfile.mkdtemp(prefix="dlcp-", dir="/tmp"))
    yield d
    shutil.rmtree(d, ignore_errors=True)


def _dir(base: Path, length: int) -> Path:
    """A directory under ``base`` whose absolute path is ``length`` bytes (made, mode 0700; names of 100 bytes
    at most)."""
    d = base
    while length - len(str(d)) > 102:           # "/" and 100 bytes, leaving room for a last "/d" at least
        d = d / ("d" * 100)
    d = d / ("d" * (length - len(str(d)) - 1))
    assert len(str(d)) == length
    d.mkdir(mode=0o700, parents=True)
    return d


def _bound(argv: list[str], cwd: str) -> tuple[str, str]:
    """(the path ssh binds for the control socket, before the random suffix, the control socket it resolves to)
    from an ssh command line run in ``cwd``: its ControlPath, and ``env --chdir=DIR`` if it starts with it."""
    path = next(a.split("=", 1)[1] for a in argv if a.startswith("ControlPath="))
    chdir = next((a.split("=", 1)[1] for a in argv if a.startswith("--chdir=")), cwd)
    return path, os.path.normpath(os.path.join(chdir, path))


@pytest.mark.skipif(shutil.which("ssh") is None, reason="needs the OpenSSH client (ssh)")
@pytest.mark.parametrize("length", LENGTHS)
def test_the_path_ssh_binds_fits_a_unix_socket(short, length):
    """For every master of a pool (up to 64 machines and 100 masters each) and every way dcnlab runs ssh over
    it (the master, a session, check, forward, exit), the socket ssh binds fits in 107 bytes, and the path
    resolves to the control socket in the pool's directory."""
    d = _dir(short, length)
    for index, k in ((1, 0), (63, 99)):
        m = SshMaster("m2", d / f"m{index}.{k}", None, short / "ssh.log")
        argv = m.argv(["true"])
        path, target = _bound(argv, os.getcwd())
        assert len(path.encode()) + SSH_TEMP_SUFFIX <= UNIX_PATH_MAX, (length, path)
        assert target == str(d / f"m{index}.{k}")
        assert argv[:len(m.control_argv())] == m.control_argv()    # the master, check, forward, exit too


@pytest.mark.skipif(shutil.which("ssh") is None, reason="needs the OpenSSH client (ssh)")
def test_relative_paths_given_to_ssh_stay_ours(tmp_path, monkeypatch):
    """ssh runs in the control directory, so what dcnlab gives it relative to its own working directory is
    made absolute: the configuration file, the control directory itself."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lab.ssh").write_text("")
    d = _dir(tmp_path, 120)
    m = SshMaster("m2", Path(d.name) / "m1.0", Path("lab.ssh"), tmp_path / "ssh.log")
    argv = m.argv(["true"])
    assert argv[argv.index("-F") + 1] == str(tmp_path / "lab.ssh")
    assert argv[:2] == ["env", f"--chdir={d}"]
    assert m.control == d / "m1.0"


@pytest.fixture
def machine(tmp_path):
    why = sshd_machine.missing()
    if why:
        pytest.skip(why)
    m = sshd_machine.start(tmp_path)
    try:
        yield m
    finally:
        sshd_machine.stop(m)


@pytest.mark.netns
@pytest.mark.timeout(600)
@pytest.mark.parametrize("length", (86, 200))
def test_a_master_in_a_long_directory_connects_and_forwards(machine, short, tmp_path, monkeypatch, length):
    """A real master whose control directory is ``length`` bytes: it connects, runs a command, forwards a
    Unix socket given relative to dcnlab's working directory (a relative ``$DCNLAB_RUN_ROOT``) to a server
    on the other machine, and leaves nothing behind when stopped."""
    d = _dir(short, length)
    monkeypatch.chdir(tmp_path)
    pool = SshPool(machine.alias, d, 1, machine.ssh_config, tmp_path, {})
    server = None
    try:
        pool.open(0)
        assert [p.name for p in d.iterdir()] == ["m1.0"] and (d / "m1.0").is_socket()
        r = pool.first.run(["echo", "reached"])
        assert r.returncode == 0 and r.stdout == "reached\n", r.stderr
        remote_sock = tmp_path / "toy.sock"
        toy = ("import socket, sys\ns = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1)\n"
               "print('ready', flush=True); c, _ = s.accept(); c.sendall(b'hello ' + c.recv(16)); c.close()\n")
        server = subprocess.Popen(pool.first.argv([sys.executable, "-c", toy, str(remote_sock)]),
                                  stdout=subprocess.PIPE, text=True)
        assert server.stdout is not None and server.stdout.readline().strip() == "ready"
        local = Path("fwd.sock")                    # relative to this test's working directory, not ssh's
        pool.first.forward([(str(local), str(remote_sock))])
        assert (tmp_path / "fwd.sock").is_socket() and not (d / "fwd.sock").exists()
        with socket.socket(socket.AF_UNIX) as c:
            c.settimeout(60)
            c.connect(str(tmp_path / "fwd.sock"))
            c.sendall(b"over ssh")
            assert c.recv(64) == b"hello over ssh"
        assert server.wait(timeout=60) == 0
    finally:
        if server is not None and server.poll() is None:
            server.kill()
            server.wait()
        pool.stop()
    assert not list(d.iterdir())
