"""The Dragonfly drawing and the flows' rates in a real browser (headless chromium, the fixture and helpers of
test_view_browser.py): the boxes chromium draws for every name, switch, host dot, group label and rate,
read in one script call, overlap nowhere; each group has its frame and a readable label; names too small to
read at the page's zoom are hidden until the user zooms in."""

from __future__ import annotations

import pytest
from test_view_browser import _ready, _shot, chromium
from test_view_browser import pytestmark  # noqa: F401 - the same skips (no chromium, driver or selenium)

from dcnlab.topos.spec import parse_spec
from dcnlab.view.labels import HOST_FONT, HOST_LABEL_HALF, overlapping, text_width
from dcnlab.view.server import ViewServer
from dcnlab.view.sources import PlanSource

BOXES_JS = """
const svg = document.getElementById('fabric'), keep = svg.getAttribute('class') || '';
svg.setAttribute('class', '');                   // the names hidden at this zoom count too
const corners = (el) => {
  const b = el.getBBox(), m = el.getScreenCTM();
  return [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]]
    .map(([x, y]) => { const p = new DOMPoint(x, y).matrixTransform(m); return [p.x, p.y]; });
};
const size = (el) => { const b = el.getBBox(); return [b.width, b.height]; };
const labels = [];
for (const g of document.querySelectorAll('#nodes g.node'))
  for (const el of g.querySelectorAll('text, rect, circle'))
    labels.push([g.dataset.id, el.tagName, el.textContent, corners(el), size(el)]);
for (const g of document.querySelectorAll('#groups g.group')) {
  const t = g.querySelector('text');
  labels.push([g.dataset.group, 'group', t.textContent, corners(t), size(t)]);
}
for (const t of document.querySelectorAll('g.flow text.rate'))
  labels.push(['rate ' + t.parentNode.dataset.flow, 'rate', t.textContent, corners(t), size(t)]);
svg.setAttribute('class', keep);
const shown = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
const groups = [...document.querySelectorAll('#groups g.group')].map((g) => ({
  id: g.dataset.group, label: g.querySelector('text').textContent, text: shown(g.querySelector('text')),
  frame: shown(g.querySelector('circle')), size: parseFloat(g.querySelector('text').style.fontSize)}));
const routers = Object.fromEntries([...document.querySelectorAll('#nodes g.node.switch')].map((g) => [g.dataset.id, shown(g)]));
return {labels, groups, routers, svg: shown(svg), cls: svg.getAttribute('class') || ''};
"""
"""Every label's four corners on screen (from getBBox through getScreenCTM, so turned names stay exact), in
one call of the page's script; the groups' labels and frames and the routers as shown."""


@pytest.fixture
def browser(tmp_path):
    yield from chromium(tmp_path)


def _boxes(d) -> dict:
    return d.execute_script(BOXES_JS)


def _overlaps(got: dict) -> list[tuple[str, str]]:
    return overlapping([(owner, tuple(tuple(p) for p in corners)) for owner, _, _, corners, _ in got["labels"]])


def _inside(inner, outer, slack=0.5) -> bool:
    return (inner[0] >= outer[0] - slack and inner[1] >= outer[1] - slack and inner[2] <= outer[2] + slack
            and inner[3] <= outer[3] + slack)


@pytest.mark.parametrize("spec,name", [("dragonfly:p=1,a=4,h=2", "dragonfly-d142.png"),
                                       ("dragonfly:p=2,a=6,h=4", "dragonfly-d264.png"),
                                       ("dragonfly:p=1,a=4,h=2,arrangement=absolute", "dragonfly-d142-absolute.png"),
                                       ("dragonfly:p=2,a=4,h=2,arrangement=circulant", "dragonfly-d242-circulant.png")])
def test_dragonfly_groups_are_framed_and_labelled_and_no_drawn_labels_overlap(browser, tmp_path, spec, name):
    fabric = parse_spec(spec)
    with ViewServer(PlanSource(fabric)) as srv:
        _ready(browser, srv.url)
        got = _boxes(browser)
        _shot(browser, tmp_path, name)
    assert _overlaps(got) == []
    assert sorted(g["label"] for g in got["groups"]) == sorted(f"G{i}" for i in range(fabric.g))
    for g in got["groups"]:
        i = int(g["id"][len("group"):])
        assert _inside(g["text"], got["svg"]) and g["text"][3] - g["text"][1] >= 7      # on screen, readable
        for j in range(fabric.a):
            r = got["routers"][fabric.router_name(i, j)]
            centre = ((r[0] + r[2]) / 2, (r[1] + r[3]) / 2)
            assert _inside((*centre, *centre), g["frame"])                             # its routers in its frame
    # the layout's proof rests on upper bounds of the text sizes: chromium's are within them
    for owner, tag, text, _, (w, h) in got["labels"]:
        if tag == "text" and owner.startswith("h"):
            assert w <= text_width(text, HOST_FONT) and h <= 2 * HOST_LABEL_HALF + 0.5, (text, w, h)
        if tag == "group":
            size = next(g["size"] for g in got["groups"] if g["id"] == owner)
            assert w <= text_width(text, size, True) and h <= 1.25 * size, (text, w, h)


def test_names_too_small_to_read_are_hidden_until_the_user_zooms_in(browser, tmp_path):
    """D(2,6,4) whole in a 1600x900 window: its 300 host names would be 2 px high, so they are hidden (a node's
    name shows on hover); eight steps of the wheel onto G0 bring them back."""
    with ViewServer(PlanSource(parse_spec("dragonfly:p=2,a=6,h=4"))) as srv:
        _ready(browser, srv.url)
        host = 'g.node[data-id="h0_0_0"] text'
        assert "tiny-hosts" in _boxes(browser)["cls"]
        assert browser.execute_script(f"return document.querySelector('{host}').getBoundingClientRect().width") == 0
        browser.execute_script("""
          const svg = document.getElementById('fabric'), r = document.querySelector('g.group[data-group="group0"] circle').getBoundingClientRect();
          for (let i = 0; i < 8; i++) svg.dispatchEvent(new WheelEvent('wheel', {deltaY: -100, clientX: r.left + r.width / 2,
                                                                                clientY: r.top + r.height / 2, bubbles: true, cancelable: true}));""")
        assert "tiny-hosts" not in _boxes(browser)["cls"]
        assert browser.execute_script(f"return document.querySelector('{host}').getBoundingClientRect().width") > 0
        _shot(browser, tmp_path, "dragonfly-d264-zoomed.png")


def test_flow_rates_are_written_clear_of_every_name_switch_and_host(browser, tmp_path):
    """``plan congestion --view`` (tenant 1 one flow, tenant 2 three, into host 0 of D(5,1,1)): each rate is
    on its own flow's first link and covers no host name, switch, group label or other rate (it covered
    h0_0_2's name before)."""
    from dcnlab import view
    from dcnlab.reproduce.congestion.plan import plan
    data = plan([("tenant1", 1.0, 1), ("tenant2", 1.0, 3)], 8e9, 0.2, "reset", True)
    src = view.plan_source(("congestion", parse_spec("dragonfly:p=5,a=1,h=1"), data))
    with ViewServer(src) as srv:
        _ready(browser, srv.url)
        got = _boxes(browser)
        _shot(browser, tmp_path, "congestion-rates.png")
    rates = [x for x in got["labels"] if x[1] == "rate"]
    assert len(rates) == 4 and all(x[2].endswith("Gb/s") for x in rates)
    assert _overlaps(got) == []
