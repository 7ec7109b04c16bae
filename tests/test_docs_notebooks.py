"""The notebooks of examples/notebooks run from top to bottom (nbclient; the BMv2 one in the BMv2 suite), and the
live view shows inline in a notebook: ``dcnlab.show(...)`` and a running ``dcnlab.Network`` render an iframe of the
view, which only pages from loopback origins may frame, and which a rendered notebook page really draws (Chromium).
"""

from __future__ import annotations

import os
import re
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

import dcnlab
from dcnlab.topos.errors import UserError

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "examples" / "notebooks"
GUARD = 600          # hang guard per cell (the slowest cell takes a few seconds)


def run_notebook(path: Path, tmp_path: Path):
    """Execute ``path`` in a fresh kernel (this Python, ZMQ over Unix sockets in ``tmp_path``), every cell even
    after an error, so that its last cell (which stops what it started) always runs; return the notebook and the
    errors, one line each."""
    import nbformat
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    km = KernelManager(kernel_name="python3", transport="ipc", ip=str(tmp_path / "kernel"))
    try:
        NotebookClient(nb, km=km, timeout=GUARD, allow_errors=True,
                       resources={"metadata": {"path": str(tmp_path)}}).execute()
    finally:
        # a client given its kernel manager does not own the kernel and leaves it running (it stayed, idle, until
        # the whole suite ended): stop what this test started
        if km.has_kernel:
            km.shutdown_kernel(now=True)
    errors = [f"cell {i}: {o.ename}: {o.evalue}" for i, c in enumerate(nb.cells) for o in c.get("outputs", [])
              if o.output_type == "error"]
    return nb, errors


def outputs(nb, kind: str) -> list[str]:
    """Every output of ``kind`` (``stream`` text, or a MIME type such as ``text/html``) in cell order."""
    out = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            if kind == "stream" and o.output_type == "stream":
                out.append(o.text)
            elif kind in o.get("data", {}):
                out.append(o.data[kind])
    return out


def test_the_notebooks_are_stored_without_outputs():
    """What the docs site renders is the notebook as written; outputs come from running it."""
    import nbformat

    found = sorted(NOTEBOOKS.glob("*.ipynb"))
    assert [p.name for p in found] == ["bmv2-experiment.ipynb", "model-sweep.ipynb"]
    for path in found:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        assert all(not c.get("outputs") and c.get("execution_count") is None for c in nb.cells if c.cell_type == "code")


def test_the_model_sweep_notebook_runs(tmp_path):
    nb, errors = run_notebook(NOTEBOOKS / "model-sweep.ipynb", tmp_path)
    assert not errors, errors
    text = "".join(outputs(nb, "stream"))
    assert "100 trees" in text
    table = re.search(r"senders +unicast +irs +m2 +kmb\n((?: *\d+(?: +[\d.]+){4}\n)+)", text)
    assert table, text
    rows = [[float(x) for x in line.split()] for line in table.group(1).splitlines()]
    assert [r[0] for r in rows] == [4, 8, 16, 32, 48]
    assert all(r[1] >= max(r[2:]) for r in rows)          # no aggregating tree costs more than unicast's
    assert outputs(nb, "image/png")                       # the plot, inline
    (frame,) = outputs(nb, "text/html")
    assert re.search(r'<iframe src="http://127\.0\.0\.1:\d+/\?token=[\w-]+"', frame), frame


@pytest.mark.bmv2
def test_the_bmv2_notebook_runs_on_bmv2(tmp_path):
    from dcnlab.emu.cleanup import leftovers

    nb, errors = run_notebook(NOTEBOOKS / "bmv2-experiment.ipynb", tmp_path)
    assert not errors, errors
    text = "".join(outputs(nb, "stream"))
    assert "<dcnlab.Network fattree:k=4 up> 20 switches" in text and " 0% packet loss" in text
    got = re.search(r"(\d+) frames captured in h2; links that carried the burst: (.*)", text)
    assert got and int(got.group(1)) > 0 and "h0_0_0->e0_0" in got.group(2), text
    cut = re.search(r"(e0_0)-(a0_\d) cut: (\d+) frames arrived .* over (.*)", text)
    assert cut and int(cut.group(3)) > 0 and f"{cut.group(1)}->{cut.group(2)}" not in cut.group(4), text
    assert outputs(nb, "image/png")
    assert any('<iframe src="http://127.0.0.1:' in h for h in outputs(nb, "text/html"))   # the network's view
    assert not leftovers()


def _headers(url: str) -> dict[str, str]:
    with urllib.request.urlopen(url, timeout=30) as r:
        assert r.status == 200
        return {k.lower(): v for k, v in r.headers.items()}


def test_a_notebook_view_may_be_framed_by_loopback_pages_only():
    from dcnlab.view import plan_source, start
    from dcnlab.view.notebook import FRAME_ANCESTORS

    fabric = dcnlab.parse_spec("dragonfly:p=1,a=4,h=2")
    plan = dcnlab.cist.plan_from_partition(fabric, dcnlab.cist.cist_partition(fabric))
    with dcnlab.show(fabric, plan) as view:
        h = _headers(view.url)
        assert "x-frame-options" not in h
        policy = dict(d.strip().split(" ", 1) for d in h["content-security-policy"].split(";"))
        assert policy["frame-ancestors"].split() == list(FRAME_ANCESTORS)
        assert policy["default-src"] == "'none'" and policy["script-src"] == "'self'"    # the rest as the view's
        assert view._repr_html_().startswith(f'<iframe src="{view.url.replace("&", "&amp;")}"')
        with pytest.raises(urllib.error.HTTPError) as no_token:
            urllib.request.urlopen(view.url.split("?")[0] + "api/trees", timeout=30)
        assert no_token.value.code == 403
    # the command line's view (--view) still refuses every frame
    cli = start(plan_source(("cist", fabric, plan, None)), say=lambda _m: None)
    try:
        h = _headers(cli.url)
        assert h["x-frame-options"] == "DENY" and "frame-ancestors 'none'" in h["content-security-policy"]
    finally:
        cli.close()


def test_show_refuses_what_it_cannot_draw_in_one_line():
    with pytest.raises(UserError, match=r"show: plan='object' is no planner's result; valid: a multicast plan"):
        dcnlab.show("fattree:k=4", object())
    with pytest.raises(UserError, match=r"show: port=80; valid: 1024\.\.65535"):
        dcnlab.show("fattree:k=4", port=80)
    with pytest.raises(UserError, match=r"show: topology=.*valid: a fabric spec"):
        dcnlab.show(42)
    with pytest.raises(Exception, match=r"fattree: parameter k=5 must be even"):
        dcnlab.show("fattree:k=5")


def test_a_network_that_is_not_up_shows_its_repr():
    net = dcnlab.Network("fattree:k=4")
    assert net._repr_html_() == "<pre>&lt;dcnlab.Network fattree:k=4 down&gt;</pre>"


@pytest.mark.skipif(not (os.access("/usr/bin/chromium", os.X_OK) and os.access("/usr/bin/chromedriver", os.X_OK)),
                    reason="chromium or chromium-driver is not installed (apt-get install chromium chromium-driver)")
def test_the_view_draws_inside_a_rendered_notebook_page(tmp_path):
    """The model-sweep notebook executed and rendered to HTML (nbconvert), served on 127.0.0.1: Chromium loads the
    view inside the page's iframe, and the tree picked there is drawn (docs/hooks/pictures.py, which also makes
    the docs' picture of it)."""
    pytest.importorskip("selenium", reason="selenium is not installed (.[test])")
    sys.path.insert(0, str(ROOT / "docs" / "hooks"))
    try:
        import pictures
    finally:
        sys.path.remove(str(ROOT / "docs" / "hooks"))
    png = pictures.notebook_view(tmp_path / "notebook.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
