"""PTF options dcnlab sets itself cannot be reached however they are spelled, and ``lab --ptf`` ports are checked
against the topology before the lab comes up. No BMv2 needed: everything here is
refused before anything is compiled or created.

PTF parses its options with argparse, which takes any unique prefix of a long option (``--test-d OTHER`` was
``--test-dir OTHER``: it ran OTHER's tests instead of DIR's), a short option's value attached (``-i0@veth0``
added an interface), ``=`` and several short flags in one word. dcnlab now asks PTF's own option table
(:mod:`dcnlab.emu.ptf_options`) what each word sets."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from dcnlab.cli import main
from dcnlab.emu import ptf as eptf
from dcnlab.emu import ptf_options

pytestmark = pytest.mark.skipif(importlib.util.find_spec("ptf") is None, reason="PTF not installed (dcnlab[ptf])")

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "ptf-router"
LAB = ROOT / "examples" / "basic-lab"


@pytest.mark.parametrize("words, option", [
    (["--test-d", "OTHER"], "--test-dir"),
    (["--test-dir=X"], "--test-dir"),
    (["--test-di=X"], "--test-dir"),
    (["-i0@veth0"], "--interface"),
    (["-i=0@veth0"], "--interface"),
    (["--inter", "0@veth0"], "--interface"),
    (["--failfast", "-qi0@veth0"], "--interface"),        # -q, then -i with its value, in one word
    (["-Pfoo"], "--platform"),
    (["--platform-d", "x"], "--platform-dir"),
    (["--platform-a=x"], "--platform-args"),
    (["-ax"], "--platform-args"),
    (["--device-s", "0-{1}@ipc:///x"], "--device-socket"),
    (["-tx=1"], "--test-params"),
    (["--test-p", "x=1"], "--test-params"),
    (["T.One", "-t"], "--test-params"),
])
def test_options_dcnlab_sets_are_refused_however_spelled(words, option):
    with pytest.raises(eptf.UserError, match=rf"^PTF option {option}\b.* is set by dcnlab .*; use --ports, --tests"):
        eptf.check_passthrough(words)


def test_the_word_as_written_is_named():
    with pytest.raises(eptf.UserError) as e:
        eptf.check_passthrough(["--failfast", "--test-d", "OTHER"])
    assert str(e.value).startswith("PTF option --test-dir (PTF reads '--test-d' as --test-dir) is set by dcnlab")
    with pytest.raises(eptf.UserError) as e:
        eptf.check_passthrough(["-i0@veth0"])
    assert str(e.value).startswith("PTF option --interface (PTF reads '-i0@veth0' as --interface) is set by dcnlab")


def test_ptfs_own_table_is_read():
    """The table is PTF's (its ``config_setup()``), not a stand-in: every option the installed PTF has."""
    parser = ptf_options._ptf_parser(str(eptf.ptf_script()))
    assert parser is not None
    options = {o for a in parser._actions for o in a.option_strings}
    assert {"--test-dir", "--interface", "-i", "--failfast", "--test-case-timeout", "--log-file"} <= options
    assert set(ptf_options.OWN) <= options and set(ptf_options.READ) <= options


@pytest.mark.parametrize("words, said", [
    (["--test", "x"], "ambiguous option: --test could match"),
    (["--plat", "x"], "ambiguous option: --plat could match --platform"),
    (["--no-such-option"], "unrecognized arguments: --no-such-option"),
    (["--log-file"], "expected one argument"),
])
def test_words_ptf_would_refuse_are_refused_before_any_work(words, said):
    with pytest.raises(eptf.UserError, match="^the words for PTF: PTF would refuse them: ") as e:
        eptf.check_passthrough(words)
    assert said in str(e.value) and "\n" not in str(e.value)


def test_ptfs_own_words_pass_and_are_read_as_ptf_reads_them(tmp_path):
    for words in (["T.One", "T.Two"], ["--failfast", "--test-case-timeout", "30"], ["--list"], ["-q", "T.One"],
                  ["--test-case", "5", "--", "T.One"], ["--log-f", "x.log"]):
        assert eptf.check_passthrough(words) == words
    read = ptf_options.given(["--log-f", "x", "--test-case=5"], eptf.ptf_script())
    assert read >= {"--log-file", "--test-case-timeout"}
    argv = eptf.ptf_argv(Path("ptf"), tmp_path, {0: "ptf0"}, "a=1", ["--log-f", "mine.log", "--test-case", "5"],
                         tmp_path)
    assert "--log-file" not in argv and "300" not in argv          # the user's, abbreviated, are PTF's only ones
    assert argv[-4:] == ["--log-f", "mine.log", "--test-case", "5"]


def _one_line(capsys, argv: list[str]) -> str:
    try:
        rc = main(argv)
    except SystemExit as e:
        rc = e.code
    assert rc == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err
    return err


@pytest.mark.parametrize("argv, said", [
    (["ptf", str(EXAMPLE), "--", "--test-d", "OTHER"],
     "dcnlab: error: PTF option --test-dir (PTF reads '--test-d' as --test-dir) is set by dcnlab"),
    (["ptf", str(EXAMPLE), "--", "-i0@veth0"],
     "dcnlab: error: PTF option --interface (PTF reads '-i0@veth0' as --interface) is set by dcnlab"),
    (["ptf", str(EXAMPLE), "--", "--test-dir=X"], "dcnlab: error: PTF option --test-dir is set by dcnlab"),
    (["ptf", "--program", str(ROOT / "examples" / "programs" / "router.p4"), "--tests", str(EXAMPLE / "ptf"), "--", "--plat", "x"],
     "PTF would refuse them: ambiguous option: --plat could match"),
    (["lab", str(LAB), "--ptf", "s1", "--tests", str(EXAMPLE / "ptf"), "--ptf-args", "--test-d OTHER"],
     "PTF option --test-dir (PTF reads '--test-d' as --test-dir) is set by dcnlab (ports, test directory, "
     "platform, test parameters); use --ptf-ports, --tests, --test-params instead"),
    (["lab", str(LAB), "--ptf", "s1", "--tests", str(EXAMPLE / "ptf"), "--ptf-args=-i0@veth0"],
     "PTF option --interface (PTF reads '-i0@veth0' as --interface) is set by dcnlab"),
    # item 13: a port the switch does not have, known from the topology before bring-up
    (["lab", str(LAB), "--ptf", "s1", "--tests", str(EXAMPLE / "ptf"), "--ptf-ports", "400"],
     "dcnlab: error: --ptf-ports 400: s1 has no port 400; valid: 1, 2, 3"),
    (["lab", str(LAB), "--ptf", "s2", "--tests", str(EXAMPLE / "ptf"), "--ptf-ports", "1,0"],
     "--ptf-ports 1,0: s2 has no port 0; valid: 1, 2, 3"),
])
def test_refused_in_one_line_before_anything_is_made(argv, said, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("DCNLAB_RUN_ROOT", str(tmp_path / "runs"))
    built = [d / "build" for d in (EXAMPLE, LAB)]
    before = [b.exists() for b in built]
    assert said in _one_line(capsys, argv)
    assert not (tmp_path / "runs").exists() and [b.exists() for b in built] == before


def test_lab_ports_are_the_topologys(tmp_path):
    """The ports ``--ptf`` takes by default are the host-facing ones, found from the topology alone."""
    from dcnlab.emu.lab import load_lab

    lab = load_lab(str(LAB), None)
    assert eptf.choose_ports(lab.fabric, "s1", None) == [1]
    assert eptf.choose_ports(lab.fabric, "s1", [3, 1, 3]) == [1, 3]


def test_a_ptf_whose_table_cannot_be_read_still_refuses_dcnlabs_options(tmp_path):
    """A ``ptf`` script made otherwise (no ``config_setup``): a stand-in table of dcnlab's own options and those
    it reads; what it resolves to one of dcnlab's is refused, anything else goes to PTF as it is."""
    script = tmp_path / "ptf"
    script.write_text("import sys\nprint('a PTF of another make')\n")
    assert ptf_options._ptf_parser(str(script)) is None
    for words in (["--test-d", "OTHER"], ["-i0@veth0"], ["--platform-a=x"]):
        with pytest.raises(ptf_options.PtfOptionError, match="is set by dcnlab"):
            ptf_options.given(words, script)
    assert ptf_options.given(["--no-such-option", "--log-f", "x", "T.One"], script) == {"--log-file"}


def test_a_directory_name_too_long_to_look_up_is_one_line(tmp_path):
    """``os.stat`` raises ENAMETOOLONG for a 300-character name, which ``Path.is_dir`` does not swallow: the
    command printed that traceback (exit 70) instead of refusing the directory."""
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-m", "dcnlab", "ptf", "x" * 300, "--program=../x"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.count("\n") == 1 and "not a valid path (name too long)" in r.stderr
