"""Network namespaces where ``/`` is not a mount point: a plain ``debootstrap`` + ``chroot``, a minimal container.

There iproute2's ``ip -n NS``, ``tc -n NS`` and ``ip netns exec NS`` stop at ``mount --make-rslave /``
(``Invalid argument``): they make a mount namespace first. In such a chroot 28 of the namespace tests
failed at once (the run's namespace, the host commands, the traffic agents' test pairs). dcnlab needs
only the network namespace and enters it with ``nsenter --net`` (:func:`dcnlab.emu.netns.command`,
:func:`dcnlab.emu.netns.exec_prefix`). These tests make the condition with :mod:`fake_chroot` and run
the namespace tests inside it; what truly needs a mount namespace (Mininet's ``mnexec``) skips there,
with the reason.
"""

from __future__ import annotations

import re
import sys
import uuid
from pathlib import Path

import pytest

import fake_chroot

pytestmark = [pytest.mark.netns, pytest.mark.timeout(1200),
              pytest.mark.skipif(bool(fake_chroot.missing()), reason=f"needs {', '.join(fake_chroot.missing())}")]

PROJECT = Path(__file__).resolve().parent.parent


def test_the_chroot_stops_iproute2s_mount_namespace_but_not_nsenter(tmp_path):
    """The condition itself: inside, ``/`` is not a mount point, ``ip netns add`` works (it bind-mounts
    /run/netns onto itself and makes it shared, which needs no mount at ``/``), ``ip -n`` and ``ip netns
    exec`` fail at ``mount --make-rslave /``, and ``nsenter --net`` enters the namespace."""
    ns = f"dlch{uuid.uuid4().hex[:8]}"
    script = (f"ip netns add {ns} || exit 10; "
              f"ip -n {ns} link show lo; echo \"ip -n: $?\"; "
              f"ip netns exec {ns} true; echo \"ip netns exec: $?\"; "
              f"nsenter --net=/run/netns/{ns} ip -o link show; echo \"nsenter: $?\"; "
              "awk '$5 == \"/\"' /proc/self/mountinfo | wc -l; "
              f"ip netns del {ns}")
    r = fake_chroot.run(tmp_path / "root", ["sh", "-c", script], timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stderr.count('"mount --make-rslave /" failed: Invalid argument') == 2, r.stderr
    lines = r.stdout.splitlines()
    assert "ip -n: 255" in lines and "ip netns exec: 255" in lines, r.stdout
    assert "nsenter: 0" in lines and lines[-1] == "0", r.stdout       # lo alone; no mount at /
    assert re.search(r"^1: lo: <LOOPBACK> ", r.stdout, re.M), r.stdout


def test_the_namespace_tests_pass_in_the_chroot(tmp_path):
    """Every namespace test (``-m "netns and not bmv2"``; not this file) inside the chroot: none fails or
    errs (a test whose tool needs a mount namespace skips there, saying so)."""
    r = fake_chroot.run(tmp_path / "root", [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
                                            "-m", "netns and not bmv2", "--ignore", str(Path(__file__)), "tests"],
                        cwd=PROJECT, timeout=1100)
    tail = "\n".join(r.stdout.splitlines()[-40:])
    assert r.returncode == 0, tail + r.stderr[-2000:]
    summary = r.stdout.strip().splitlines()[-1]
    assert re.search(r"\b\d+ passed\b", summary) and not re.search(r"failed|error", summary), summary


def test_the_condition_is_seen(tmp_path):
    """:func:`fake_chroot.root_is_mount_point`, on which the tests' skip reasons rest, sees the chroot."""
    code = "import fake_chroot; print(fake_chroot.root_is_mount_point())"
    r = fake_chroot.run(tmp_path / "root", [sys.executable, "-c", code], cwd=Path(__file__).parent, timeout=120)
    assert r.stdout.strip() == "False", r.stdout + r.stderr
