"""Marker gating: tests that need p4c, BMv2 or root skip with a reason naming what is missing."""

from __future__ import annotations

import os
import shutil
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

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
    return out


def pytest_collection_modifyitems(config, items):
    for item in items:
        reasons = _reasons(item)
        if reasons:
            item.add_marker(pytest.mark.skip(reason="; ".join(reasons)))
