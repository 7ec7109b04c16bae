"""The house of dcnlab: no import circles, and each layer imports only the layers below it.

The import graph is read by grimp (the library under import-linter) from the source, without importing
it. Every ``import`` statement counts: those at module level, those inside functions (a lazy import is
still a dependency: it runs the first time the function does) and those under ``if TYPE_CHECKING:``.

The layers, from the top (each may import only those below it; modules on one line are siblings that
must not import each other)::

    dcnlab.cli (and dcnlab.__main__)        argument parsing, one thin function per command
    dcnlab.bench | dcnlab.report            benchmarks; the report of reproduce all and its orchestration
    dcnlab.reproduce                        one package per mechanism, none importing another
    dcnlab.sweep, dcnlab.figures, dcnlab.results
                                            the pool and Dask; plot style and checks; summary, tables, outputs
    dcnlab.api, dcnlab.testing (and dcnlab itself)
    dcnlab.view
    dcnlab.emu
    dcnlab.traffic
    dcnlab.p4src
    dcnlab.controller
    dcnlab.topos
"""

from __future__ import annotations

import grimp
import pytest

#: top first; a tuple is one layer of independent siblings (they must not import each other)
LAYERS: tuple[tuple[str, ...] | str, ...] = (
    "dcnlab.cli",
    ("dcnlab.bench", "dcnlab.report"),
    "dcnlab.reproduce",
    "dcnlab.sweep | dcnlab.figures | dcnlab.results",
    "dcnlab.api | dcnlab.testing",
    "dcnlab.view",
    "dcnlab.emu",
    "dcnlab.traffic",
    "dcnlab.p4src",
    "dcnlab.controller",
    "dcnlab.topos",
)
MECHANISMS = ("aggregation", "multicast", "congestion", "cist")


@pytest.fixture(scope="module")
def graph():
    return grimp.build_graph("dcnlab", include_external_packages=False, cache_dir=None)


def _layer(layer: tuple[str, ...] | str) -> grimp.Layer:
    if isinstance(layer, tuple):
        return grimp.Layer(*layer, independent=True)
    return grimp.Layer(*(m.strip() for m in layer.split("|")), independent=False)


def _say(dependencies) -> list[str]:
    lines = []
    for dep in sorted(dependencies, key=lambda d: (d.importer, d.imported)):
        routes = sorted(" -> ".join([*r.heads, *r.middle, *r.tails][:6]) for r in dep.routes)
        lines.append(f"{dep.importer} imports {dep.imported}, e.g. {routes[0]}")
    return lines


def circles(graph) -> list[list[str]]:
    """Every import circle (strongly connected set of two or more modules), by Tarjan's algorithm."""
    modules = sorted(graph.modules)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in modules:
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    scc = []
                    while True:
                        m = stack.pop()
                        on_stack.discard(m)
                        scc.append(m)
                        if m == node:
                            break
                    if len(scc) > 1:
                        found.append(sorted(scc))
    return sorted(found)


def test_no_import_circles(graph):
    found = circles(graph)
    assert not found, "import circles:\n" + "\n".join(
        f"{len(c)} modules: {', '.join(c)}" for c in found)


def test_layers_import_only_downwards(graph):
    layers = [_layer(x) for x in LAYERS]
    illegal = graph.find_illegal_dependencies_for_layers(layers=layers)
    assert not illegal, "imports that run up the layers:\n" + "\n".join(_say(illegal))


def test_package_root_and_main_stay_in_place(graph):
    """``dcnlab`` itself (the scripting API's lazy names) imports nothing above the API; ``python -m dcnlab``
    only calls the CLI."""
    allowed_by_root = ("dcnlab.api", "dcnlab.testing", "dcnlab.view", "dcnlab.emu", "dcnlab.traffic",
                       "dcnlab.p4src", "dcnlab.controller", "dcnlab.topos")
    above = [m for m in graph.find_modules_directly_imported_by("dcnlab")
             if not m.startswith(tuple(p + "." for p in allowed_by_root)) and m not in allowed_by_root]
    assert not above
    assert graph.find_modules_directly_imported_by("dcnlab.__main__") <= {"dcnlab.cli"}


def test_mechanisms_do_not_import_each_other(graph):
    """A change to one mechanism's reproduction stays in ``dcnlab/reproduce/<mechanism>/``: what two share
    lives in a lower module."""
    illegal = graph.find_illegal_dependencies_for_layers(
        layers=[grimp.Layer(*MECHANISMS, independent=True)], containers={"dcnlab.reproduce"})
    assert not illegal, "\n".join(_say(illegal))


def test_every_package_says_what_it_holds_and_may_import():
    """Each package of the house opens with a docstring naming what it holds and what it may import."""
    import ast
    from pathlib import Path

    import dcnlab
    root = Path(dcnlab.__file__).parent
    missing = []
    for name in ("cli", "bench", "report", "reproduce", "sweep", "figures", "results",
                 *(f"reproduce/{m}" for m in MECHANISMS)):
        init = root / name / "__init__.py"
        doc = ast.get_docstring(ast.parse(init.read_text())) if init.exists() else None
        if not doc or "import" not in doc:
            missing.append(str(init.relative_to(root.parent)))
    assert not missing, f"packages without a docstring that says what they may import: {missing}"


REPORT_MAY_IMPORT = ("dcnlab.reproduce", "dcnlab.reproduce.protocol", "dcnlab.reproduce.registry")
"""What the report may import of :mod:`dcnlab.reproduce`: the reproductions' interface and their registry, never a
reproduction by name (a new paper, dcnlab's or a user's plug-in, needs no edit of the report)."""


def report_imports_of_reproductions(graph) -> list[str]:
    """Every import of a module under ``dcnlab.reproduce`` by a module of ``dcnlab.report`` other than
    :data:`REPORT_MAY_IMPORT` (at module level, in a function or under ``TYPE_CHECKING``), as
    ``importer imports imported``."""
    report = {m for m in graph.modules if m == "dcnlab.report" or m.startswith("dcnlab.report.")}
    found = []
    for importer in sorted(report):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            if imported.startswith("dcnlab.reproduce.") and imported not in REPORT_MAY_IMPORT:
                found.append(f"{importer} imports {imported}")
    return found


def test_the_report_names_no_reproduction(graph):
    """``dcnlab/report/`` drives every reproduction through :mod:`dcnlab.reproduce.protocol`, found in
    :mod:`dcnlab.reproduce.registry`: it imports no ``reproduce/<mechanism>`` module."""
    found = report_imports_of_reproductions(graph)
    assert not found, "the report imports reproductions by name:\n" + "\n".join(found)


def test_a_report_import_of_a_reproduction_is_caught(tmp_path):
    """The check above sees a lazy import in a function of a report module (a package built beside)."""
    import shutil
    import sys
    from pathlib import Path

    import dcnlab
    root = tmp_path / "src"
    shutil.copytree(Path(dcnlab.__file__).parent, root / "dcnlab",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so", "static", "*.p4", "search_tables"))
    with (root / "dcnlab" / "report" / "write.py").open("a") as f:
        f.write("\n\ndef _sneaky():\n    from dcnlab.reproduce.cist import model\n    return model\n")
    sys.path.insert(0, str(root))
    saved = {k: v for k, v in sys.modules.items() if k == "dcnlab" or k.startswith("dcnlab.")}
    try:
        for k in saved:
            del sys.modules[k]
        built = grimp.build_graph("dcnlab", include_external_packages=False, cache_dir=None)
        assert report_imports_of_reproductions(built) == [
            "dcnlab.report.write imports dcnlab.reproduce.cist.model"]
    finally:
        sys.path.remove(str(root))
        for k in [k for k in sys.modules if k == "dcnlab" or k.startswith("dcnlab.")]:
            del sys.modules[k]
        sys.modules.update(saved)
