"""The live view in a real browser: Debian's chromium, headless, driven by selenium (chromium-driver).

Skips with a reason where chromium, its driver or selenium is missing. The model-backend tests need
nothing else; the ``bmv2`` one runs a fat-tree k=4 and pings across it. Load and update times are
printed (``-s``), never asserted.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import time

import pytest

from dcnlab.topos.spec import parse_spec
from dcnlab.view.server import ViewServer
from dcnlab.view.sources import PlanSource

CHROMIUM, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--window-size=1600,900")
GUARD = 120.0      # hang guard for the page to get ready (it takes well under a second idle)

pytestmark = [
    pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK), reason="chromium is not installed (apt-get install chromium)"),
    pytest.mark.skipif(not os.access(DRIVER, os.X_OK), reason="chromedriver is missing (apt-get install chromium-driver)"),
    pytest.mark.skipif(importlib.util.find_spec("selenium") is None, reason="selenium is not installed (.[test])"),
]


@pytest.fixture
def browser(tmp_path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for f in FLAGS:
        opts.add_argument(f)
    opts.add_argument(f"--user-data-dir={tmp_path / 'profile'}")
    d = webdriver.Chrome(options=opts, service=Service(DRIVER))
    try:
        yield d
    finally:
        d.quit()
        shutil.rmtree(tmp_path / "profile", ignore_errors=True)


def _ready(d, url: str) -> dict:
    d.get(url)
    end = time.monotonic() + GUARD
    while not d.execute_script("return document.body.dataset.ready") and time.monotonic() < end:
        time.sleep(0.05)
    assert d.execute_script("return document.body.dataset.ready"), d.find_element("id", "status").text
    return d.execute_script("return window.dcnlabView")


def _count(d, css: str) -> int:
    return int(d.execute_script(f"return document.querySelectorAll({css!r}).length"))


def test_model_plan_page_shows_every_switch_host_and_a_picked_tree(browser, tmp_path):
    from selenium.webdriver.support.ui import Select

    from dcnlab.controller.multicast.hierarchy import hierarchy_for
    from dcnlab.controller.multicast.planning import mapping_for, plan
    from dcnlab.controller.multicast.workload import build_pattern, parse_pattern
    from dcnlab.view.trees import multicast_trees
    h = hierarchy_for(parse_spec("fattree:k=4"))
    result = plan(h, build_pattern(h, parse_pattern("random:3:seed=2"), mapping_for(h, 4, False)), "cmr4lms-fixed", 4)
    with ViewServer(PlanSource(h.fabric, multicast_trees(h, result))) as srv:
        stats = _ready(browser, srv.url)
        assert _count(browser, "g.node.switch") == 20 and _count(browser, "g.node.host") == 16
        assert _count(browser, "line.link") == 48 and stats["switches"] == 20 and stats["hosts"] == 16
        group = result.groups[0]
        Select(browser.find_element("id", "trees")).select_by_value(f"mc{group.mgid}")
        assert _count(browser, "line.link.tree") == len(result.tree(group.tree).links)
        assert _count(browser, "g.node.member") == len(group.members)
        browser.save_screenshot(str(tmp_path / "fattree-k4-multicast-tree.png"))
        # without the token the page is refused
        browser.get(srv.url.split("?")[0])
        assert "forbidden" in browser.page_source
    assert (tmp_path / "fattree-k4-multicast-tree.png").stat().st_size > 10_000


def test_fattree_k8_page_load_and_update_cost(browser, tmp_path):
    """Fat-tree k=8 (80 switches, 128 hosts, 384 links) with every link's rate changing each update:
    the times are printed (load, and per update the in-place attribute changes), not asserted."""
    from dcnlab.view import rates as r

    fabric = parse_spec("fattree:k=8")
    links = list(fabric.links())
    ticks = {"n": 0}

    class Busy(PlanSource):
        def rates(self):           # every link busy, at a load that moves through the classes each second
            ticks["n"] += 1
            before = r.Sample(0.0, {(l.a, l.b): (0, 0) for l in links})
            after = r.Sample(1.0, {(l.a, l.b): (10 ** ((i + ticks["n"]) % 9), 1) for i, l in enumerate(links)})
            return r.rates(self._topo, before, after) | {"note": ""}
    with ViewServer(Busy(fabric)) as srv:
        stats = _ready(browser, srv.url)
        assert _count(browser, "g.node.switch") == 80 and _count(browser, "g.node.host") == 128
        assert _count(browser, "line.link") == 384
        browser.set_script_timeout(GUARD)
        took = browser.execute_async_script("""
            const done = arguments[arguments.length - 1];
            (async () => {
              const out = [];
              for (let i = 0; i < 20; i++) {
                const q = '/api/rates?token=' + new URLSearchParams(location.search).get('token');
                const r = await (await fetch(q)).json();
                const t = performance.now();
                window.dcnlabView.apply(r);
                out.push(performance.now() - t);
              }
              done(out);
            })();""")
        browser.save_screenshot(str(tmp_path / "fattree-k8-busy.png"))
    took = sorted(took)
    print(f"\nfat-tree k=8: page load {stats['loadMs']:.0f} ms; update median {took[len(took) // 2]:.2f} ms, "
          f"max {took[-1]:.2f} ms (384 links, every link's class changing)")
    assert len(took) == 20


@pytest.mark.bmv2
def test_fattree_k4_run_shows_rates_on_the_pinged_path_only(browser, tmp_path):
    import dcnlab
    src, dst = "h0_0_0", "h3_1_1"
    with dcnlab.Network("fattree:k=4", view=True) as net:
        assert net.view is not None
        stats = _ready(browser, net.view.url)
        assert _count(browser, "g.node.switch") == 20 and _count(browser, "g.node.host") == 16
        ping = net.hosts[src].popen(["ping", "-i", "0.05", "-s", "1000", "-w", "600", net.hosts[dst].ip])
        try:
            end = time.monotonic() + GUARD
            busy: dict = {}
            while time.monotonic() < end:
                rates = browser.execute_script("return window.dcnlabView.rates")
                busy = {int(i): v for i, v in (rates or {}).get("links", {}).items() if max(v[0], v[1]) > 5000}
                if len(busy) >= 6:
                    break
                time.sleep(0.5)
            browser.save_screenshot(str(tmp_path / "fattree-k4-ping.png"))
        finally:
            ping.terminate()
            ping.wait()
        topo = net.view.source.topology()
        ends = {i: {topo["links"][i]["a"], topo["links"][i]["b"]} for i in busy}
        on_path = lambda n: n.startswith(("c", "a0_", "e0_0", "a3_", "e3_1")) or n in (src, dst)  # noqa: E731
        assert any(src in e for e in ends.values()) and any(dst in e for e in ends.values()), ends
        assert all(all(on_path(n) for n in e) for e in ends.values()), ends       # none elsewhere
        assert stats["loadMs"] is not None
