"""The Pythons dcnlab claims are the Pythons it tests: pyproject.toml's requires-python, its
``Programming Language :: Python :: 3.X`` classifiers and noxfile.py's sessions name the same range, the
example plug-in package claims the same, each Vagrant box's system Python is one of them, and the README
says so.

noxfile.py is read with ast, not imported, so that this test runs wherever the suite runs (nox need not
be installed)."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

from packaging.specifiers import SpecifierSet

if sys.version_info >= (3, 11):
    import tomllib
else:       # Python 3.10: the test extra installs tomli, the same parser under its earlier name
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
# The system Python of each Ubuntu release a Vagrant box may be (python3 of the release's archive).
UBUNTU_PYTHON = {"22.04": "3.10", "24.04": "3.12"}


def project(path: Path = ROOT / "pyproject.toml") -> dict:
    return tomllib.loads(path.read_text())["project"]


def minor(v: str) -> tuple[int, int]:
    major, mnr = v.split(".")
    return int(major), int(mnr)


def classifier_versions(meta: dict) -> list[str]:
    return [m.group(1) for c in meta.get("classifiers", [])
            if (m := re.fullmatch(r"Programming Language :: Python :: (3\.\d+)", c))]


def nox_pythons(path: Path = ROOT / "noxfile.py") -> tuple[list[str], list[object]]:
    """noxfile.py's PYTHONS list, and what each @nox.session(python=...) decorator passes (names as "PYTHONS")."""
    tree = ast.parse(path.read_text(), filename=str(path))
    pythons: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "PYTHONS" for t in node.targets):
            pythons = ast.literal_eval(node.value)
    sessions: list[object] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            for dec in node.decorator_list:
                if isinstance(dec, ast.Call) and ast.unparse(dec.func) == "nox.session":
                    kw = {k.arg: k.value for k in dec.keywords}
                    value = kw.get("python")
                    sessions.append(value.id if isinstance(value, ast.Name) else
                                    ast.literal_eval(value) if value is not None else None)
    return pythons, sessions


def test_nox_sessions_run_the_listed_pythons():
    pythons, sessions = nox_pythons()
    assert pythons and all(isinstance(v, str) and re.fullmatch(r"3\.\d+", v) for v in pythons), pythons
    assert sessions == ["PYTHONS"], f"every nox session runs python=PYTHONS, found {sessions}"


def test_classifiers_and_nox_sessions_name_the_same_consecutive_versions():
    pythons, _ = nox_pythons()
    classified = classifier_versions(project())
    assert sorted(classified, key=minor) == sorted(pythons, key=minor), \
        f"pyproject.toml classifiers {classified} vs noxfile.py PYTHONS {pythons}"
    minors = sorted(minor(v)[1] for v in pythons)
    assert minors == list(range(minors[0], minors[-1] + 1)), f"a gap in the supported Pythons: {pythons}"


def test_requires_python_starts_at_the_oldest_tested_python():
    pythons, _ = nox_pythons()
    spec = SpecifierSet(project()["requires-python"])
    for v in pythons:
        assert spec.contains(f"{v}.0"), f"requires-python {spec} excludes {v}, which noxfile.py tests"
    oldest = min(pythons, key=minor)
    below = f"3.{minor(oldest)[1] - 1}.99"
    assert not spec.contains(below), f"requires-python {spec} admits {below}, older than any nox session"


def test_the_example_plugin_package_claims_the_same_range():
    """``pip install -e examples/plugins`` (the README's "Your own algorithm") works on every supported Python."""
    assert project(ROOT / "examples" / "plugins" / "pyproject.toml")["requires-python"] == project()["requires-python"]


def test_each_vagrant_box_has_a_tested_python():
    pythons, _ = nox_pythons()
    boxes = re.findall(r'"bento/ubuntu-(\d\d\.\d\d)"', (ROOT / "Vagrantfile").read_text())
    assert boxes, "no bento/ubuntu-XX.YY box in the Vagrantfile"
    for release in boxes:
        assert release in UBUNTU_PYTHON, f"Ubuntu {release}: add its system Python to UBUNTU_PYTHON"
        assert UBUNTU_PYTHON[release] in pythons, f"Ubuntu {release}'s Python {UBUNTU_PYTHON[release]} is not tested"


def test_the_docs_name_the_range_and_each_box_python():
    pythons, _ = nox_pythons()
    import docs_pages
    readme = docs_pages.text()     # README.md and the docs site's pages, lines joined as Markdown joins them
    lo, hi = min(pythons, key=minor), max(pythons, key=minor)
    assert f"dcnlab supports Python {lo} to {hi}" in readme
    for release in re.findall(r'"bento/ubuntu-(\d\d\.\d\d)"', (ROOT / "Vagrantfile").read_text()):
        assert f"{UBUNTU_PYTHON[release]} on Ubuntu {release}" in readme
