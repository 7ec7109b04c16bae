"""p4c: the base program compiles, the cache works, and the committed P4Info fixture is current."""

from __future__ import annotations

import pytest
from google.protobuf import text_format

from p4fixtures import FIXTURE

pytestmark = pytest.mark.p4c


def test_compile_and_cache(tmp_path, monkeypatch):
    from dcnlab.p4src.compiler import compile_program
    monkeypatch.setenv("DCNLAB_CACHE", str(tmp_path))
    first = compile_program()
    assert not first.cached and first.json.is_file() and first.p4info.is_file()
    again = compile_program()
    assert again.cached and again.key == first.key and again.json == first.json


def test_changed_source_changes_the_key(tmp_path, monkeypatch):
    import shutil
    from dcnlab.p4src import compiler
    monkeypatch.setenv("DCNLAB_CACHE", str(tmp_path / "cache"))
    src = tmp_path / "src"
    shutil.copytree(compiler.SRC_DIR, src, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    a = compiler.compile_program(src_dir=src)
    (src / "ecn.p4").write_text((src / "ecn.p4").read_text() + "\n// changed\n")
    b = compiler.compile_program(src_dir=src)
    assert a.key != b.key and not b.cached


def test_syntax_error_is_reported(tmp_path, monkeypatch):
    from dcnlab.p4src import compiler
    monkeypatch.setenv("DCNLAB_CACHE", str(tmp_path / "cache"))
    (tmp_path / "bad.p4").write_text("control X( { }\n")
    with pytest.raises(compiler.CompileError, match="p4c failed"):
        compiler.compile_program("bad", src_dir=tmp_path)


def test_committed_p4info_fixture_is_up_to_date():
    from dcnlab.controller.runtime.proto import p4info_pb2
    from dcnlab.p4src.compiler import compile_program
    fresh, committed = p4info_pb2.P4Info(), p4info_pb2.P4Info()
    text_format.Merge(compile_program().p4info.read_text(), fresh, allow_unknown_field=True)
    text_format.Merge(FIXTURE.read_text(), committed, allow_unknown_field=True)
    assert fresh == committed, ("p4src/ changed: cp \"$(dcnlab compile --p4info)\" tests/fixtures/dcnlab.p4info.txtpb")


def test_device_config_drops_source_info_and_shrinks_only_keyless_tables():
    import json

    from dcnlab.p4src.compiler import compile_program, device_json
    prog = compile_program()
    full = json.loads(prog.json.read_text())
    compact = json.loads(device_json(prog.json).read_text())
    logged = json.loads(device_json(prog.json, compact=False).read_text())
    assert "source_info" not in device_json(prog.json).read_text() and "source_info" in json.dumps(logged)
    assert device_json(prog.json).stat().st_size < prog.json.stat().st_size / 3

    def strip(o):
        if isinstance(o, dict):
            return {k: strip(v) for k, v in o.items() if k != "source_info"}
        return [strip(v) for v in o] if isinstance(o, list) else o

    def sizes(doc):
        return {t["name"]: (bool(t["key"]), t["max_size"]) for p in doc["pipelines"] for t in p["tables"]}
    before, after = sizes(full), sizes(compact)
    assert sum(not keyed for keyed, _ in before.values()) >= 10          # p4c's hidden action tables
    for name, (keyed, size) in before.items():
        assert after[name] == ((keyed, size) if keyed else (False, 1)), name
    for doc in (full, compact, logged):
        for p in doc["pipelines"]:
            for t in p["tables"]:
                t["max_size"] = 0
    assert strip(full) == compact == strip(logged)


def test_committed_router_p4info_is_up_to_date():
    """tests/test_entry_files.py checks entries against this fixture, made from examples/programs/router.p4."""
    from pathlib import Path

    from dcnlab.controller.runtime.proto import p4info_pb2
    from dcnlab.p4src.compiler import compile_program
    here = Path(__file__).parent
    fresh, committed = p4info_pb2.P4Info(), p4info_pb2.P4Info()
    prog = compile_program("router", src_dir=here.parent / "examples" / "programs")
    text_format.Merge(prog.p4info.read_text(), fresh, allow_unknown_field=True)
    text_format.Merge((here / "fixtures" / "router.p4info.txtpb").read_text(), committed, allow_unknown_field=True)
    assert fresh == committed


def test_cache_key_covers_included_files_in_subfolders(tmp_path):
    """Editing a file the program includes from a subfolder changes the key (no stale build)."""
    from dcnlab.p4src.compiler import sources_digest
    (tmp_path / "include").mkdir()
    (tmp_path / "prog.p4").write_text('#include <core.p4>\n#include "include/headers.p4"\n')
    (tmp_path / "include" / "headers.p4").write_text('#include "../common.p4"\n')
    (tmp_path / "common.p4").write_text("// v1\n")
    before = sources_digest(tmp_path)
    (tmp_path / "include" / "headers.p4").write_text('#include "../common.p4"\n// edited\n')
    assert sources_digest(tmp_path) != before
    (tmp_path / "unrelated.txt").write_text("not P4")
    after = sources_digest(tmp_path)
    assert sources_digest(tmp_path) == after
