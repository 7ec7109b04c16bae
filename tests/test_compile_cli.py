"""``dcnlab compile`` takes a user's FILE.p4 as ``run --program`` does.

Without p4c: a bad argument (missing file, directory, FIFO, a file not named .p4, an unknown name) is
one line and exit status 2 before p4c is looked for; with the argument good and p4c missing, one line
naming p4c and nothing written to the cache. A stand-in p4c (a shell script under
``$DCNLAB_P4_PREFIX/bin``) shows what the command prints around p4c: the cache paths of a compiled
program, and p4c's own message, lines and carets, for one that does not compile (exit status 1). The
``p4c``-marked tests do the same with the real compiler on examples/programs/router.p4 and a broken
program.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest

from dcnlab.controller.runtime.toolchain import PREFIX_VAR
from dcnlab.cli import main

ROOT = Path(__file__).resolve().parent.parent
ROUTER = ROOT / "examples" / "programs" / "router.p4"
BROKEN = "#include <core.p4>\n#include <v1model.p4>\ncontrol X(inout bit<8> y) { apply { y = z; } }\n"


def dcnlab(argv: list[str], capsys) -> tuple[int, str, str]:
    try:
        rc = main(argv)
    except SystemExit as e:         # argparse's errors
        rc = int(e.code or 0)
    out, err = capsys.readouterr()
    return rc, out, err


def one_line_error(rc: int, err: str) -> str:
    assert rc == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert "\x1b" not in err and "\x00" not in err, err
    return err


@pytest.fixture
def no_p4c(tmp_path, monkeypatch) -> Path:
    """p4c is missing (whether or not this machine has it); the cache is a fresh directory."""
    monkeypatch.delenv(PREFIX_VAR, raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    if any((Path(d) / "p4c").exists() for d in ("/usr/bin", "/bin")):
        pytest.skip("p4c is installed in /usr/bin: it cannot be hidden")
    cache = tmp_path / "cache"
    monkeypatch.setenv("DCNLAB_CACHE", str(cache))
    return cache


@pytest.mark.parametrize(("make", "words"), [
    (lambda d: d / "missing.p4", ["missing.p4' does not exist"]),
    (lambda d: d, ["is a directory"]),
    (lambda d: _write(d / "router.txt", ROUTER.read_text()), ["router.txt' is not a P4 source file",
                                                             "does not end in .p4"]),
    (lambda d: _write(d / "router", ROUTER.read_text()), ["router' is not a P4 source file"]),
    (lambda d: _fifo(d / "pipe.p4"), ["pipe.p4' is not a regular file (a FIFO)"]),
    (lambda d: _mkdir(d / "dir.p4"), ["dir.p4' is a directory"]),
    (lambda d: d / "\x1b[2Jx.p4", ["\\x1b[2Jx.p4' does not exist"]),
], ids=["missing", "directory", "not-p4", "no-suffix", "fifo", "directory-p4", "control-characters"])
def test_a_bad_program_argument_is_one_line_before_p4c(tmp_path, capsys, no_p4c, make, words):
    work = _mkdir(tmp_path / "work")
    arg = str(make(work))
    err = one_line_error(*dcnlab(["compile", arg], capsys)[::2])
    assert err.startswith("dcnlab compile: error: argument PROGRAM: "), err
    assert all(w in err for w in words) and "valid: a program of p4src/ (" in err and "or an existing FILE.p4" in err
    assert "p4c" not in err.replace("p4src", "")      # the argument first: no word of p4c yet
    assert not no_p4c.exists()


@pytest.mark.parametrize("arg", ["nope", "", "dcnlab.p4"])
def test_an_unknown_name_lists_the_builtin_programs(arg, capsys, no_p4c, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    err = one_line_error(*dcnlab(["compile", arg], capsys)[::2])
    assert f"argument PROGRAM: {arg!r} " in err and "dcnlab, " in err and "or an existing FILE.p4" in err, err


@pytest.mark.parametrize("argv", [["compile"], ["compile", "dcnlab"], ["compile", str(ROUTER)],
                                  ["compile", "examples/programs/router.p4", "--p4info"]])
def test_p4c_missing_is_one_line_and_nothing_is_written(argv, capsys, no_p4c, monkeypatch):
    monkeypatch.chdir(ROOT)
    err = one_line_error(*dcnlab(argv, capsys)[::2])
    assert err.startswith("dcnlab: error: dcnlab compile needs ") and "p4c" in err, err
    assert not no_p4c.exists()


# -- around p4c: a stand-in compiler -------------------------------------------------------------
FAKE_P4C = r"""#!/bin/sh
if [ "$1" = --version ]; then echo "p4c 0.0.0 (stand-in)"; exit 0; fi
for a; do src=$a; done
if grep -q 'y = z' "$src"; then
    printf '%s(3): [--Werror=not-found] error: z: declaration not found\n' "$src" >&2
    printf 'control X(inout bit<8> y) { apply { y = z; } }\n' >&2
    printf '                                        ^\n' >&2
    printf 'a control character: \033[2J\n' >&2
    exit 1
fi
while [ $# -gt 0 ]; do
    case $1 in -o) out=$2; shift;; --p4runtime-files) info=$2; shift;; esac
    shift
done
echo '{}' > "$out/$(basename "$src" .p4).json"
echo 'pkg_info {}' > "$info"
"""


@pytest.fixture
def fake_p4c(tmp_path, monkeypatch) -> Path:
    prefix = tmp_path / "prefix"
    (prefix / "bin").mkdir(parents=True)
    p4c = prefix / "bin" / "p4c"
    p4c.write_text(FAKE_P4C)
    p4c.chmod(p4c.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv(PREFIX_VAR, str(prefix))
    cache = tmp_path / "cache"
    monkeypatch.setenv("DCNLAB_CACHE", str(cache))
    return cache


def test_a_users_program_compiles_into_the_cache_and_the_paths_are_printed(tmp_path, capsys, fake_p4c,
                                                                           monkeypatch):
    prog = _write(tmp_path / "mine" / "router.p4", ROUTER.read_text())
    monkeypatch.chdir(tmp_path)
    rc, out, err = dcnlab(["compile", "mine/router.p4"], capsys)
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].startswith(f"{prog}: compiled (key ")
    json_path, p4info = Path(lines[1].split()[-1]), Path(lines[2].split()[-1])
    assert lines[1].split()[0] == "json" and lines[2].split()[0] == "p4info"
    assert json_path.is_file() and p4info.is_file() and json_path.is_relative_to(fake_p4c / "p4c")
    assert (json_path.name, p4info.name) == ("router.json", "router.p4info.txtpb")
    rc, out, _ = dcnlab(["compile", str(prog)], capsys)
    assert rc == 0 and out.splitlines()[0].startswith(f"{prog}: cached (key ")
    assert dcnlab(["compile", str(prog), "--p4info"], capsys)[1] == f"{p4info}\n"


def test_a_program_that_does_not_compile_shows_p4cs_message(tmp_path, capsys, fake_p4c):
    bad = _write(tmp_path / "bad.p4", BROKEN)
    rc, out, err = dcnlab(["compile", str(bad)], capsys)
    assert rc == 1 and not out and "Traceback" not in err
    lines = err.splitlines()
    assert lines[0] == f"{bad}(3): [--Werror=not-found] error: z: declaration not found"
    assert lines[2].strip() == "^" and len(lines[2]) - len(lines[2].lstrip()) == 40     # p4c's caret, in place
    assert lines[3] == "a control character: \\x1b[2J"
    assert lines[-1] == f"dcnlab: error: p4c failed on {bad} (exit 1); its message is above"
    assert not any(p.is_dir() and not p.name.startswith("version-") for p in (fake_p4c / "p4c").iterdir())


# -- the real p4c ---------------------------------------------------------------------------------
@pytest.mark.p4c
def test_router_example_compiles(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("DCNLAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(ROOT)
    rc, out, err = dcnlab(["compile", "examples/programs/router.p4"], capsys)
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].startswith(f"{ROUTER}: compiled (key ")
    json_path, p4info = Path(lines[1].split()[-1]), Path(lines[2].split()[-1])
    assert json_path.is_file() and p4info.is_file() and "RIngress.routes" in p4info.read_text()
    assert json_path.is_relative_to(tmp_path / "cache" / "p4c")
    rc, out, _ = dcnlab(["compile", "examples/programs/router.p4"], capsys)
    assert rc == 0 and out.splitlines()[0].startswith(f"{ROUTER}: cached (key ")


@pytest.mark.p4c
def test_p4cs_error_for_a_broken_program(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("DCNLAB_CACHE", str(tmp_path / "cache"))
    bad = _write(tmp_path / "bad.p4", BROKEN)
    rc, out, err = dcnlab(["compile", str(bad)], capsys)
    assert rc == 1 and not out and "Traceback" not in err, err
    lines = err.splitlines()
    assert any("bad.p4(3)" in line and "error" in line for line in lines[:-1]), err
    assert re.fullmatch(rf"dcnlab: error: p4c failed on {re.escape(str(bad))} \(exit \d+\); its message is above",
                        lines[-1]), err


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def _mkdir(path: Path) -> Path:
    path.mkdir()
    return path
