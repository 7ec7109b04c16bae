"""Marker gating: tests that need p4c, BMv2 or root skip with a reason naming what is missing."""

from __future__ import annotations

import os
import shutil
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
os.environ.setdefault("DCNLAB_NO_CACHE", "1")    # every run computes (a test may patch code the cache keys miss)

import fake_chroot  # noqa: E402
from dcnlab.controller.runtime.toolchain import PREFIX_VAR, missing  # noqa: E402


def _root_reason() -> str | None:
    return None if os.geteuid() == 0 else "needs root (network namespaces, veths)"


def _reasons(item) -> list[str]:
    out = []
    if item.get_closest_marker("netns") or item.get_closest_marker("bmv2"):
        r = _root_reason()
        if r:
            out.append(r)
        if shutil.which("ip") is None:
            out.append("needs the `ip` command (iproute2)")
    if item.get_closest_marker("p4c"):
        m = missing("p4c")
        if m:
            out.append(f"p4c not found on PATH or ${PREFIX_VAR}/bin")
    if item.get_closest_marker("bmv2"):
        m = missing("simple_switch_grpc", "simple_switch_CLI", "p4c")
        if m:
            out.append(f"{', '.join(m)} not found on PATH or ${PREFIX_VAR}/bin")
        if not fake_chroot.root_is_mount_point():
            out.append(fake_chroot.NO_MOUNT_NAMESPACE)
    return out


def pytest_collection_modifyitems(config, items):
    for item in items:
        reasons = _reasons(item)
        if reasons:
            item.add_marker(pytest.mark.skip(reason="; ".join(reasons)))


@pytest.fixture(autouse=True)
def _own_run_root(request, tmp_path_factory, monkeypatch):
    """Every BMv2 test records its runs under a root of its own, so that its leftover checks see only
    its own runs, never another dcnlab run on the same machine (a test may still set its own)."""
    if request.node.get_closest_marker("bmv2") and "DCNLAB_RUN_ROOT" not in os.environ:
        monkeypatch.setenv("DCNLAB_RUN_ROOT", str(tmp_path_factory.mktemp("runs")))
