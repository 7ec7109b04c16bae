"""report.html in a real browser (headless chromium driven by selenium, as in test_view_browser.py): the
headline table fits a 1,400-pixel window, and in a narrower one it scrolls inside its own box with the
verdict column held in view.

Its rows are a quick run's widest (``dcnlab reproduce all --quick --emulate off``: the table was 1,416
pixels wide at 1,400, the verdict column cut off), with BMv2 figures added to fill the BMv2 columns.
Skips where chromium, its driver or selenium is missing.
"""

from __future__ import annotations

import os
import shutil

import pytest
from test_view_browser import (
    CHROMIUM,
    DRIVER,
    FLAGS,
    pytestmark,  # noqa: F401 - the same skips (no chromium, driver or selenium)
)

from dcnlab.report import write as report
from dcnlab.results.summary import Headline

RUN = {"mode": "quick", "emulate": "on", "workers": 2, "cluster": None, "wall_seconds": 1047.8,
       "model_seconds": 949.8, "seed": None, "emulation_why": "ran", "date": "2026-12-07 03:58:09 UTC", "cpus": 2}

ROWS = [  # from the quick run's summary.json (reading and plot left out)
    {"seed": "000", "statement": "Shuffle+reduce wait about 2/3 shorter than without aggregation, across network "
     "sizes (Table 1: BCube(6,k), k = 2..6) (abstract)", "paper": 66.66666666666667, "model": 95.17875590106367,
     "unit": "%", "tolerance": "±3 points", "kind": "percent", "direction": "up", "reference": 0.0,
     "paper_text": "about 2/3 shorter (no model given)", "spread": 0.01774364791178097, "spread_of": "100 rounds",
     "points": {"link-bound": 95.17875590106367, "link-bound-ecmp": 80.15888888888888,
                "reduce-bound": 89.80166666666666},
     "point_spreads": {"link-bound": 0.01774364791178097, "link-bound-ecmp": 0.08174513511885809,
                       "reduce-bound": 0.03621352997273843}},
    {"seed": "000", "statement": "M2 uses the fewest newly added servers (BCube(6,k), Fig. 5(c))", "paper": None,
     "model": -4.829999999999999, "unit": "newly added servers, M2 minus best other, worst k", "tolerance": "at most 0",
     "kind": "trend", "direction": "at most", "reference": 0.0, "paper_text": "fewest", "spread": 0.20599843090507639,
     "spread_of": "100 rounds",
     "points": {"2": -4.83, "3": -20.44, "4": -34.81, "5": -52.97, "6": -72.2, "7": -89.71, "8": -109.31},
     "point_spreads": {"2": 0.206, "3": 0.42, "4": 0.556, "5": 0.668, "6": 0.729, "7": 0.76, "8": 0.807}},
]
GUARD = 120.0


def _heads() -> list[Headline]:
    heads = [Headline.from_json(r) for r in ROWS]
    heads.append(Headline("002", "Parking lot on one FIFO egress queue: (A+B)/D stays near 1 as flows are added "
                                 "(Fig. 7, slowly: 2 s and 1 s, against 'very fast' after arrivals)", 1.0, 1.0,
                          emulation=2.08, emulation_spread=0.034, kind="ratio", unit="(A+B) / D, worst phase",
                          paper_text="1 (A+B = D = E, the same statement's expectation)"))
    heads.append(Headline("002", "Theorem 1: 1:2 gives 2:1", 2.0, 1.5, emulation=2.1, kind="ratio", unit="ratio"))
    return heads


@pytest.fixture
def browser(tmp_path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for f in FLAGS:
        opts.add_argument("--window-size=1400,900" if f.startswith("--window-size=") else f)
    opts.add_argument(f"--user-data-dir={tmp_path / 'profile'}")
    d = webdriver.Chrome(options=opts, service=Service(DRIVER))
    d.set_page_load_timeout(GUARD)
    try:
        yield d
    finally:
        d.quit()
        shutil.rmtree(tmp_path / "profile", ignore_errors=True)


_MEASURE = """
const t = document.querySelector('table.headlines') || [...document.querySelectorAll('table')][0];
t.scrollIntoView();
window.scrollTo(0, window.scrollY);           // as a reader sees it: the page not scrolled sideways
const box = t.parentElement;
const verdicts = [...t.rows].map(r => r.cells[r.cells.length - 1].getBoundingClientRect());
return {viewport: document.documentElement.clientWidth, page: document.documentElement.scrollWidth,
        table: t.getBoundingClientRect().width, box_right: box.getBoundingClientRect().right,
        box_scrolls: box.scrollWidth > box.clientWidth, header: t.rows[0].cells[t.rows[0].cells.length - 1].textContent,
        lefts: verdicts.map(v => v.left), rights: verdicts.map(v => v.right)};
"""


def _shot(d, tmp_path, name: str) -> None:
    d.save_screenshot(str(tmp_path / name))
    if os.environ.get("DCNLAB_VIEW_SHOTS"):
        os.makedirs(os.environ["DCNLAB_VIEW_SHOTS"], exist_ok=True)
        shutil.copy(tmp_path / name, os.path.join(os.environ["DCNLAB_VIEW_SHOTS"], name))


def test_the_headline_tables_verdict_column_is_in_view_at_1400_pixels_and_scrolls_in_its_box_below(browser, tmp_path):
    page = tmp_path / "report.html"
    page.write_text(report.report_html(tmp_path, [], _heads(), RUN))
    browser.get(page.as_uri())
    m = browser.execute_script(_MEASURE)
    _shot(browser, tmp_path, "report-1400.png")
    print("1400 px:", {k: m[k] for k in ("viewport", "page", "table")})
    assert m["header"] == "verdict" and len(m["rights"]) == len(_heads()) + 1
    assert max(m["rights"]) <= m["viewport"], m        # every verdict cell ends inside the window
    assert m["page"] <= m["viewport"], m               # and the page itself does not scroll sideways
    assert not m["box_scrolls"], m                     # the quick run's table fits whole: numbers wrap in their cells
    # half as wide: the table scrolls inside its box, the verdict column stays at the box's right edge
    browser.set_window_size(700, 900)
    m = browser.execute_script(_MEASURE)
    _shot(browser, tmp_path, "report-700.png")
    assert m["box_scrolls"], m
    assert all(left >= 0 for left in m["lefts"]) and max(m["rights"]) <= min(m["box_right"], m["viewport"]), m
