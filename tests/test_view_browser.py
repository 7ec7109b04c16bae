"""The live view in a real browser: Debian's chromium, headless, driven by selenium (chromium-driver).

Skips with a reason where chromium, its driver or selenium is missing. The model-backend tests need
nothing else; the ``bmv2`` one runs a fat-tree k=4 and pings across it. Load and update times are
printed (``-s``), never asserted.
"""

from __future__ import annotations

import importlib.util
import os
import re
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
RUNS = 5           # page loads measured at fat-tree k=8

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


def _shot(d, tmp_path, name: str):
    """A screenshot in tmp_path, and also in $DCNLAB_VIEW_SHOTS if set (for the issue's note)."""
    path = tmp_path / name
    d.save_screenshot(str(path))
    if os.environ.get("DCNLAB_VIEW_SHOTS"):
        os.makedirs(os.environ["DCNLAB_VIEW_SHOTS"], exist_ok=True)
        shutil.copy(path, os.path.join(os.environ["DCNLAB_VIEW_SHOTS"], name))
    return path


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
        _shot(browser, tmp_path, "fattree-k4-multicast-tree.png")
        # without the token the page is refused
        browser.get(srv.url.split("?")[0])
        assert "forbidden" in browser.page_source
    assert (tmp_path / "fattree-k4-multicast-tree.png").stat().st_size > 10_000


def test_fattree_k8_page_load_and_update_cost(browser, tmp_path):
    """Fat-tree k=8 (80 switches, 128 hosts, 384 links) with every link's rate changing each update, in 5
    page loads: per load, the time from navigation to a drawn page (Performance API), and the median of
    20 updates (one /api/rates answer applied; then with the browser's style and layout forced; then to
    the next animation frame). Printed (``-s``), not asserted: a measurement, not a pass condition."""
    from dcnlab.view import rates as r

    fabric = parse_spec("fattree:k=8")
    links = list(fabric.links())
    ticks = {"n": 0}

    class Busy(PlanSource):
        def rates(self):           # every link busy, at a load that moves through the classes each call
            ticks["n"] += 1
            before = r.Sample(0.0, {(l.a, l.b): (0, 0) for l in links})
            after = r.Sample(1.0, {(l.a, l.b): (10 ** ((i + ticks["n"]) % 9), 1) for i, l in enumerate(links)})
            return r.rates(self._topo, before, after) | {"note": ""}
    loads, applies, styled, framed = [], [], [], []
    with ViewServer(Busy(fabric)) as srv:
        browser.set_script_timeout(GUARD)
        for _ in range(RUNS):
            stats = _ready(browser, srv.url)
            assert _count(browser, "g.node.switch") == 80 and _count(browser, "g.node.host") == 128
            assert _count(browser, "line.link") == 384
            took = browser.execute_async_script("""
                const done = arguments[arguments.length - 1];
                const frame = () => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)));
                (async () => {
                  const out = [];
                  for (let i = 0; i < 20; i++) {
                    const q = '/api/rates?token=' + new URLSearchParams(location.search).get('token');
                    const r = await (await fetch(q)).json();
                    await frame();
                    const t = performance.now();
                    window.dcnlabView.apply(r);
                    const applied = performance.now() - t;
                    void document.documentElement.offsetHeight;    // style and layout of the changed links, now
                    const styled = performance.now() - t;
                    await new Promise((ok) => requestAnimationFrame(ok));
                    out.push([applied, styled, performance.now() - t]);
                  }
                  done(out);
                })();""")
            assert len(took) == 20
            loads.append(stats["readyMs"])
            applies.append(_median([a for a, _, _ in took]))
            styled.append(_median([b for _, b, _ in took]))
            framed.append(_median([c for _, _, c in took]))
        _shot(browser, tmp_path, "fattree-k8-busy.png")
    print(f"\nfat-tree k=8 (80 switches, 128 hosts, 384 links), {RUNS} page loads: "
          f"load {_spread(loads, 0)} ms; one update (every link's class changing): "
          f"apply {_spread(applies, 2)} ms, apply + style and layout {_spread(styled, 2)} ms, "
          f"to the next frame {_spread(framed, 1)} ms (vsync included)")


def _median(xs):
    xs = sorted(xs)
    return (xs[(len(xs) - 1) // 2] + xs[len(xs) // 2]) / 2


def _spread(xs, digits: int) -> str:
    return f"median {_median(xs):.{digits}f} (min {min(xs):.{digits}f}, max {max(xs):.{digits}f})"


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
            _shot(browser, tmp_path, "fattree-k4-ping.png")
        finally:
            ping.terminate()
            ping.wait()
        topo = net.view.source.topology()
        ends = {i: {topo["links"][i]["a"], topo["links"][i]["b"]} for i in busy}
        on_path = lambda n: n.startswith(("c", "a0_", "e0_0", "a3_", "e3_1")) or n in (src, dst)  # noqa: E731
        assert any(src in e for e in ends.values()) and any(dst in e for e in ends.values()), ends
        assert all(all(on_path(n) for n in e) for e in ends.values()), ends       # none elsewhere
        assert stats["loadMs"] is not None


SEND_FRAMES = """
import socket, sys, time
iface, frame, pps, seconds = sys.argv[1], bytes.fromhex(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as s:
    s.bind((iface, 0))
    n, t0 = 0, time.monotonic()
    while n < pps * seconds:
        s.send(frame)
        n += 1
        time.sleep(max(0.0, t0 + n / pps - time.monotonic()))
print(n)
"""


@pytest.mark.bmv2
def test_multicast_tree_on_bmv2_is_highlighted_exactly_on_the_links_its_packets_cross(browser, tmp_path):
    """C-MR4LMS on a fat-tree k=4 (no unicast routes: only the group's frames move): the page, opened before
    the group exists, gets the group's tree once installed; the links it highlights for the group are the
    links the page's rates (interfaces' counters) show busy, and the counters over the whole sending agree."""
    import subprocess
    import sys

    from selenium.webdriver.support.ui import Select

    import dcnlab
    from dcnlab.controller.multicast.dataplane import MulticastDataplane
    from dcnlab.traffic.multicast_agent import KIND_MULTICAST, SHIM, SHIM_OFFSET, multicast_frame
    from dcnlab.view.trees import dataplane_trees

    mgid, members, pps, size, seconds = 5, ["h0_0_0", "h0_1_1", "h1_0_0", "h2_1_0", "h3_0_1"], 50, 1000, 600
    fabric = parse_spec("fattree:k=4")
    h = dcnlab.multicast.hierarchy_for(fabric)
    with dcnlab.Network(fabric, routes=False, view=True) as net:
        _ready(browser, net.view.url)
        assert _count(browser, "#trees option") == 1                  # "none": no group yet
        dp = MulticastDataplane(net.controller, h, 2, dual=False)
        dp.add_group(mgid, members)
        net.view.source.set_trees(dataplane_trees(dp))
        end = time.monotonic() + GUARD
        while _count(browser, "#trees option") < 2 and time.monotonic() < end:   # the page reloads its trees
            time.sleep(0.2)
        Select(browser.find_element("id", "trees")).select_by_value(f"mc{mgid}")
        lit = {int(e.get_attribute("data-id")) for e in browser.find_elements("css selector", "line.link.tree")}
        topo = net.view.source.topology()
        ends = {frozenset((l["a"], l["b"])): l["id"] for l in topo["links"]}
        (tree,) = dp.group_trees(mgid)
        assert lit == {ends[frozenset(p)] for p in tree.directed_links(h)}, "page's tree != data plane's tree"
        assert _count(browser, "g.node.member") == len(members) and _count(browser, "g.node.root") == 1

        sender = net.hosts[members[0]]
        frame = bytearray(multicast_frame(sender.mac, sender.ip, size))
        frame[SHIM_OFFSET:SHIM_OFFSET + SHIM.size] = SHIM.pack(KIND_MULTICAST, dp.color(mgid), mgid)
        before = net.link_packets()
        proc = sender.popen([sys.executable, "-S", "-c", SEND_FRAMES, sender.iface, bytes(frame).hex(), str(pps),
                             str(seconds)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        expected = pps * size            # B/s each tree link carries (one copy per frame, away from the sender)
        busy: dict = {}
        try:
            end = time.monotonic() + GUARD
            while time.monotonic() < end:     # until two samples in a row show the whole tree busy
                rates = browser.execute_script("return window.dcnlabView.rates") or {}
                busy = {int(i): max(v[0], v[1]) for i, v in rates.get("links", {}).items()}
                if {i for i, v in busy.items() if v > expected / 2} >= lit:
                    break
                time.sleep(0.5)
            time.sleep(1.5)                   # one more sample, taken while the frames flow at full rate
            rates = browser.execute_script("return window.dcnlabView.rates") or {}
            busy = {int(i): max(v[0], v[1]) for i, v in rates.get("links", {}).items()}
            _shot(browser, tmp_path, "fattree-k4-bmv2-multicast.png")
        finally:
            proc.terminate()
            proc.wait(timeout=30)
        time.sleep(0.5)
        after = net.link_packets()
        carried = {l for l, v in busy.items() if v > expected / 2}
        assert carried == lit, f"busy {sorted(carried)} vs tree {sorted(lit)}: {busy}"
        assert all(v < expected / 20 for l, v in busy.items() if l not in lit), busy      # no others carry them
        # the counters over the whole sending: each tree link carried the frames, in the predicted direction
        sent = {k: after[k] - before[k] for k in after}
        frames = max(sent[(members[0], "e0_0")], 1)
        model = set(dp.predicted_copies(sender.name, mgid))
        crossed = {k for k, n in sent.items() if n >= frames * 0.9}
        assert crossed == model, (sorted(crossed ^ model), frames)
        assert all(n < frames / 10 for k, n in sent.items() if k not in model and k[0] in net.switches), sent


def test_tenants_flows_of_a_congestion_plan_are_drawn_in_their_colours_with_rates(browser, tmp_path):
    """``dcnlab plan congestion --model --view``'s source: every flow a line of its tenant's colour along its
    path (into the receiver over the bottleneck), its rate written on it, a legend row per tenant with its
    share of the bottleneck."""
    from dcnlab import view
    from dcnlab.reproduce.congestion.plan import plan
    data = plan([("tenant1", 1.0, 1), ("tenant2", 1.0, 3)], 8e9, 0.2, "reset", True)
    src = view.plan_source(("congestion", parse_spec("dragonfly:p=5,a=1,h=1"), data))
    with ViewServer(src) as srv:
        _ready(browser, srv.url)
        flows = src.flows()["flows"]
        assert _count(browser, "g.flow") == 4
        colour = {}
        for f in flows:
            g = browser.find_element("css selector", f'g.flow[data-flow="{f["id"]}"]')
            assert _count(browser, f'g.flow[data-flow="{f["id"]}"] line') == len(f["links"]) == 2
            colour[f["tenant"]] = colour.get(f["tenant"], set()) | {browser.execute_script(
                "return getComputedStyle(arguments[0].querySelector('line')).stroke", g)}
            rate = g.find_element("css selector", "text.rate").text
            assert rate.endswith("Gb/s") and float(rate.split()[0]) == pytest.approx(f["rate_bps"] / 1e9, abs=0.01)
        assert all(len(c) == 1 for c in colour.values()) and colour["tenant1"] != colour["tenant2"]
        rows = browser.find_elements("css selector", "#tenants div.tenant")
        assert [r.get_attribute("data-tenant") for r in rows] == ["tenant1", "tenant2"]
        for r, t in zip(rows, src.flows()["tenants"]):
            shown = re.search(r"([0-9.]+)% of the bottleneck", r.text)
            assert shown and float(shown.group(1)) == pytest.approx(100 * t["share"], abs=0.051), r.text
        _shot(browser, tmp_path, "s4-congestion-flows.png")


def _open_block(d, block: str) -> None:
    """Click a drawn block and wait until the page has drawn it opened."""
    d.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))",
                     d.find_element("css selector", f'g.node[data-id="{block}"]'))
    end = time.monotonic() + GUARD
    while not _count(d, f'g.opened[data-block="{block}"]') and time.monotonic() < end:
        time.sleep(0.1)
    assert _count(d, f'g.opened[data-block="{block}"]'), d.find_element("id", "status").text


@pytest.mark.parametrize("spec", ["bcube:n=8,k=5"])
def test_a_block_of_a_big_bcube_aggregation_plan_opens_into_its_members_and_closes(browser, tmp_path, spec):
    """BCube(8,5) (720,896 nodes) drawn as 57 blocks with an aggregation tree: a group's servers open into 8
    sub-blocks, one of those into 8 more, one of those into its 512 servers, drawn in place with the tree's
    members marked; closing the outermost restores the 57 blocks. Only the opened block's detail is sent."""
    from selenium.webdriver.support.ui import Select

    from dcnlab.controller import aggregation as agg
    from dcnlab.view.trees import aggregation_trees
    fabric = parse_spec(spec)
    tree = agg.incast_tree(fabric, "v0", ["v1", "v9", "v4097", "v32768", "v32769"], "irs")
    src = PlanSource(fabric, aggregation_trees(tree))
    with ViewServer(src) as srv:
        _ready(browser, srv.url)
        shown = lambda: _count(browser, "g.node:not(.open)")     # noqa: E731
        before = shown()
        assert before == len(src.topology()["nodes"]) == 57
        Select(browser.find_element("id", "trees")).select_by_index(1)
        _open_block(browser, "group0/server")
        assert shown() == before - 1 + 8
        _open_block(browser, "group0/server#0")
        _open_block(browser, "group0/server#0#0")
        assert shown() == before - 1 + 7 + 7 + 512
        assert _count(browser, 'g.opened[data-block="group0/server#0#0"] g.node.server') == 512
        roles = aggregation_trees(tree)[0].roles                 # v0, v1, v9 are among the 512 drawn
        for n in ("v0", "v1", "v9"):
            assert _count(browser, f'g.opened g.node.{roles[n]}[data-id="{n}"]') == 1, (n, roles[n])
        assert _count(browser, "g.opened line.link.tree") >= 2
        _shot(browser, tmp_path, "s4-bcube85-block-open.png")
        browser.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))",
                               browser.find_element("css selector", 'g.opened[data-block="group0/server"] rect.frame'))
        assert shown() == before and _count(browser, "g.opened") == 0
        assert all(e.value_of_css_property("display") != "none" for e in browser.find_elements("css selector", "#links line"))


@pytest.mark.parametrize("counted", [True, False])
def test_losses_the_program_counts_are_marked_per_switch_else_the_page_says_it_counts_none(browser, tmp_path, counted):
    """A live source whose drop counters grow 40 packets/s at e0_0 and nowhere else: one marker there with
    its packets/s; a program without drop counters: the header says it counts none, and no marker (not 0)."""
    from dcnlab.view.drops import DropSample
    from dcnlab.view.rates import Sample
    from dcnlab.view.sources import LiveSource
    ticks = iter(range(10**6))

    def drops():
        n = next(ticks)
        if not counted:
            return DropSample(float(n), {}, frozenset({"e0_0", "a0_0"}))
        return DropSample(float(n), {"e0_0": {("DcnIngress.tenant.tenant_dropped", 1): 40 * n},
                                     "a0_0": {("DcnIngress.tenant.tenant_dropped", 1): 0}})
    src = LiveSource(parse_spec("fattree:k=4"), "unused", take=lambda: Sample(time.monotonic(), {}), drops=drops,
                     interval=0.25, drop_interval=0.25)
    with ViewServer(src) as srv:
        _ready(browser, srv.url)
        end = time.monotonic() + GUARD
        want = "losses (programs' drop counters): 40 pkt/s" if counted else "this program counts no drops"
        while want not in browser.find_element("id", "drops").text and time.monotonic() < end:
            time.sleep(0.1)
        assert want in browser.find_element("id", "drops").text, browser.find_element("id", "drops").text
        marks = browser.find_elements("css selector", "g.dropmark")
        if counted:
            assert [m.get_attribute("data-switch") for m in marks] == ["e0_0"]
            assert marks[0].find_element("css selector", "text").text == "40 pkt/s lost"
        else:
            assert marks == []
        _shot(browser, tmp_path, f"s4-drops-{'counted' if counted else 'uncounted'}.png")


@pytest.mark.bmv2
def test_fattree_k4_run_marks_the_packets_a_meter_drops_at_its_switch(browser, tmp_path):
    """dcnlab's program counts a tenant's red packets (``tenant_dropped``): h0_0_0's pings (100/s of 1 kB)
    through a 20 kB/s meter at e0_0 lose most of their packets there; the page marks e0_0, and only it,
    with the packets/s its counter grew by (read over P4Runtime), about what the pings lose."""
    import dcnlab
    from dcnlab.controller.congestion.dataplane import CongestionDataplane, TenantKey
    from dcnlab.controller.congestion.policy import MeterRate
    src, dst, pps = "h0_0_0", "h3_1_1", 100
    with dcnlab.Network("fattree:k=4", view=True) as net:
        _ready(browser, net.view.url)
        dp = CongestionDataplane(net.controller, packet_bytes=1042)
        dp.classify("e0_0", {TenantKey(net.hosts[src].ip): 1})
        dp.set_meters("e0_0", [MeterRate("e0_0", "t1", 1, 20_000 * 8, 4 * 1042)])
        ping = net.hosts[src].popen(["ping", "-q", "-i", str(1 / pps), "-s", "1000", "-w", "600", net.hosts[dst].ip])
        try:
            end = time.monotonic() + GUARD
            losing: dict = {}
            while time.monotonic() < end:
                d = (browser.execute_script("return window.dcnlabView.rates") or {}).get("drops") or {}
                losing = {k: v["pps"] for k, v in d.get("switches", {}).items() if v["pps"] > 0}
                if losing.get("e0_0", 0) > 5:
                    break
                time.sleep(0.5)
            time.sleep(2.5)          # one more drop reading at full rate, then the page as it is
            marks = {m.get_attribute("data-switch"): m.find_element("css selector", "text").text
                     for m in browser.find_elements("css selector", "g.dropmark")}
            rates = browser.execute_script("return window.dcnlabView.rates") or {}
            _shot(browser, tmp_path, "s4-fattree-k4-bmv2-meter-drops.png")
        finally:
            ping.terminate()
            ping.wait()
        # what the pings offered (packets/s into e0_0 from h0_0_0, from the interfaces' counters): a busy
        # machine sends fewer than 100/s; the meter passes about 20 kB/s, 19 of them
        (link,) = [l for l in net.view.source.topology()["links"] if {l["a"], l["b"]} == {src, "e0_0"}]
        r = rates["links"][str(link["id"])]
        offered = r[2] if link["a"] == src else r[3]
        assert list(marks) == ["e0_0"], marks
        lost = float(marks["e0_0"].split()[0])
        assert 0.5 * (offered - 25) <= lost <= 1.1 * offered + 5, (marks, offered)
        assert "losses (programs' drop counters)" in browser.find_element("id", "drops").text


@pytest.mark.bmv2
@pytest.mark.p4c
def test_a_running_congestion_experiments_flows_are_drawn_with_their_rates(browser, tmp_path, monkeypatch):
    """The BMv2 experiment's meter run of (b) (tenants t1 and t2, weights 1 and 1/2, one flow each): it
    publishes its flows in its run directory, and the view of that run (``dcnlab view RUN_DIR``'s source)
    draws both in their tenants' colours with non-zero rates from their senders' links, the meters in the
    legend."""
    import threading

    from dcnlab.reproduce.congestion import bmv2 as bp
    from dcnlab.view.attach import run_source
    monkeypatch.setenv("DCNLAB_RUN_ROOT", str(tmp_path / "runs"))
    cfg = bp.quick()
    plan = bp.ratio_plan(cfg, 2, "meter")
    with bp.testbed(cfg) as tb:
        done: dict = {}
        runner = threading.Thread(target=lambda: done.setdefault("run", bp.run_plan(tb, plan)), daemon=True)
        with ViewServer(run_source(tb.net.run.path)) as srv:
            _ready(browser, srv.url)
            runner.start()
            end, rates = time.monotonic() + GUARD, {}
            while time.monotonic() < end and runner.is_alive():
                flows = srv.source.flows()["flows"]
                rates = {f["id"]: f["rate_bps"] for f in flows}
                if len(rates) == 2 and all(v > 0 for v in rates.values()) and _count(browser, "g.flow") == 2:
                    break
                time.sleep(0.3)
            time.sleep(1.5)
            labels = [e.text for e in browser.find_elements("css selector", "g.flow text.rate")]
            legend = browser.find_element("id", "tenants").text
            _shot(browser, tmp_path, "s4-congestion-bmv2-flows.png")
            runner.join(timeout=GUARD)
        assert set(rates) == {"inc1", "inc2"} and all(v > 0 for v in rates.values()), rates
        assert len(labels) == 2 and all(x.endswith("b/s") and not x.startswith("0 ") for x in labels), labels
        assert "t1" in legend and "t2" in legend and "meter" in legend, legend
        assert "run" in done
