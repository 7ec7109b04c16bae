"""The documentation's pictures, made from real runs: ``python docs/hooks/pictures.py [OUT_DIR]``.

* ``live-view.png``: the live view of a small plan (IRS's incast tree on BCube(4,1), the model backend), served by
  dcnlab's own view server and captured with headless Chromium (``/usr/bin/chromium``, Debian's package);
* ``report-figure.png``: a figure of the report, from ``dcnlab reproduce congestion --quick --emulate off`` (the
  fluid model of paper 002, about ten seconds on two cores): Fig. 5's tenant-level fairness;
* ``notebook-live-view.png``: the live view inline in a rendered notebook page (:func:`notebook_view`).

Without OUT_DIR they replace the committed copies in ``docs/assets/``. The docs build makes them afresh, into a
directory of its own, when ``DCNLAB_DOCS_PICTURES=1`` (``docs/hooks/dcnlab_docs.py``); the test command builds
with the committed copies (tests/test_docs_build.py makes them too, where Chromium is installed).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-quic",
         "--no-first-run", "--disable-component-update", "--disable-sync", "--hide-scrollbars")
SIZE = (1200, 720)
BUDGET_MS = 8000        # Chromium's virtual time for the page to fetch its topology and trees and draw them
GUARD = 120             # hang guard for one run (each takes seconds)
REPORT_FIGURE = "fig5_tenants_cc.png"
NOTEBOOK = ROOT / "examples" / "notebooks" / "model-sweep.ipynb"


def browser(profile: str, size: tuple[int, int] = SIZE):
    """Headless Chromium driven by selenium (Debian's chromium-driver), or None where either is missing."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        return None
    if not (shutil.which(CHROMIUM) and shutil.which(DRIVER)):
        return None
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for f in (*FLAGS, f"--user-data-dir={profile}", f"--window-size={size[0]},{size[1]}"):
        opts.add_argument(f)
    return webdriver.Chrome(options=opts, service=Service(DRIVER))


def wait_for(d, script: str, what: str) -> None:
    end = time.monotonic() + GUARD
    while not d.execute_script(script):
        if time.monotonic() > end:
            raise RuntimeError(f"{what}: not after {GUARD} s")
        time.sleep(0.05)


def screenshot(url: str, out: Path, pick_tree: bool = False, size: tuple[int, int] = SIZE) -> Path:
    """``url`` as headless Chromium draws it, in a profile of its own (removed afterwards). With selenium, the
    page's first tree is picked once the page is ready; without it, Chromium's own ``--screenshot``."""
    if not shutil.which(CHROMIUM):
        raise RuntimeError(f"{CHROMIUM} is not installed (apt-get install chromium)")
    with tempfile.TemporaryDirectory(prefix="dcnlab-chromium-") as profile:
        d = browser(profile, size)
        if d is None:
            subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", f"--window-size={size[0]},{size[1]}",
                            f"--virtual-time-budget={BUDGET_MS}", f"--screenshot={out}", url],
                           check=True, capture_output=True, timeout=GUARD)
        else:
            try:
                d.get(url)
                wait_for(d, "return document.body.dataset.ready", "the view's page ready")
                if pick_tree:
                    d.execute_script("const s = document.getElementById('trees'); s.selectedIndex = 1;"
                                     "s.dispatchEvent(new Event('change'));")
                    wait_for(d, "return document.querySelectorAll('line.link.tree').length > 0", "the tree drawn")
                d.save_screenshot(str(out))
            finally:
                d.quit()
    if not out.is_file() or out.stat().st_size == 0:
        raise RuntimeError(f"chromium wrote no screenshot of {url}")
    return out


def live_view(out: Path) -> Path:
    """The live view of IRS's tree from six senders to v0 on BCube(4,1), the tree picked in the page."""
    import dcnlab

    fabric = dcnlab.parse_spec("bcube:n=4,k=1")
    tree = dcnlab.aggregation.incast_tree(fabric, "v0", ["v2", "v5", "v9", "v10", "v11", "v14"], "irs")
    with dcnlab.show(fabric, tree) as view:
        return screenshot(view.url, out, pick_tree=True)


def report_figure(out: Path) -> Path:
    """Fig. 5 of paper 002 as ``dcnlab reproduce congestion --quick --emulate off`` draws it for the report."""
    with tempfile.TemporaryDirectory(prefix="dcnlab-report-") as tmp:
        subprocess.run([sys.executable, "-m", "dcnlab", "reproduce", "congestion", "--quick", "--emulate", "off",
                        "--out", tmp], check=True, capture_output=True, timeout=GUARD * 5, cwd=tmp)
        shutil.copyfile(Path(tmp) / REPORT_FIGURE, out)
    return out


def notebook_view(out: Path) -> Path:
    """The live view inline in a rendered notebook page: ``examples/notebooks/model-sweep.ipynb`` executed with
    nbclient (its last cell, which closes the view, left out), rendered to HTML by nbconvert, served on 127.0.0.1
    and captured in Chromium while the kernel still serves the view. Needs selenium and chromium-driver."""
    import threading
    from functools import partial
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    import nbformat
    from nbclient import NotebookClient
    from nbconvert import HTMLExporter

    nb = nbformat.read(NOTEBOOK, as_version=4)
    nb.cells = [c for c in nb.cells if "view.close()" not in c.source]
    with tempfile.TemporaryDirectory(prefix="dcnlab-notebook-") as tmp, \
            tempfile.TemporaryDirectory(prefix="dcnlab-chromium-") as profile:
        from jupyter_client.manager import KernelManager

        km = KernelManager(kernel_name="python3", transport="ipc", ip=str(Path(tmp) / "kernel"))   # no TCP ports
        client = NotebookClient(nb, km=km, timeout=GUARD, resources={"metadata": {"path": tmp}})
        with client.setup_kernel():
            for i, cell in enumerate(nb.cells):
                client.execute_cell(cell, i)
            page, _ = HTMLExporter(template_name="lab").from_notebook_node(nb)
            (Path(tmp) / "index.html").write_text(page)

            class Quiet(SimpleHTTPRequestHandler):
                def log_message(self, format: str, *args: object) -> None:
                    pass

            server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=tmp))
            threading.Thread(target=server.serve_forever, daemon=True).start()
            d = browser(profile, (1200, 900))
            if d is None:
                raise RuntimeError("selenium and chromium-driver are needed to capture a view inside a page")
            try:
                d.get(f"http://127.0.0.1:{server.server_address[1]}/index.html")
                frame = d.find_element("css selector", "iframe[title='dcnlab live view']")
                d.execute_script("arguments[0].scrollIntoView({block: 'center'}); window.scrollBy(0, 40);", frame)
                d.switch_to.frame(frame)
                wait_for(d, "return document.body.dataset.ready", "the view's page inside the notebook")
                d.execute_script("const s = document.getElementById('trees'); s.selectedIndex = 1;"
                                 "s.dispatchEvent(new Event('change'));")
                wait_for(d, "return document.querySelectorAll('line.link.tree').length > 0", "the tree drawn")
                d.switch_to.default_content()
                d.save_screenshot(str(out))
            finally:
                d.quit()
                server.shutdown()
                server.server_close()
    return out


def make_all(out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    return [live_view(out_dir / "live-view.png"), report_figure(out_dir / "report-figure.png"),
            notebook_view(out_dir / "notebook-live-view.png")]


if __name__ == "__main__":
    for path in make_all(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "assets"):
        print(f"wrote {path}")
