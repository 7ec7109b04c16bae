"""The Thrift/CLI channel against a fake simple_switch_CLI (its real output formats)."""

from __future__ import annotations

import pytest

from dcnlab.controller.runtime import ThriftError
from dcnlab.controller.runtime.thrift import ThriftChannel

BANNER = "Obtaining JSON from switch...\nDone\nControl utility for runtime P4 table manipulation\n"


class FakeCLI:
    """Answers like simple_switch_CLI: a prompt before each command's output."""

    def __init__(self, registers: dict[str, list[int]]) -> None:
        self.registers = registers
        self.calls: list[tuple[list[str], str]] = []
        self.queue: dict[str, int] = {}

    def __call__(self, argv: list[str], stdin: str, netns: str | None = None) -> str:
        self.calls.append((argv, stdin))
        out = BANNER
        for line in stdin.strip().splitlines():
            out += "RuntimeCmd: "
            cmd, *args = line.split()
            if cmd == "register_read":
                reg = self.registers.get(args[0])
                if reg is None:
                    out += "Invalid register operation (INVALID_REGISTER_NAME)\n"
                elif len(args) == 2:
                    out += f"{args[0]}[{args[1]}]= {reg[int(args[1])]}\n"
                else:
                    out += f"{args[0]}= " + ", ".join(map(str, reg)) + "\n"
            elif cmd == "register_write":
                self.registers[args[0]][int(args[1])] = int(args[2])
            elif cmd == "register_reset":
                self.registers[args[0]] = [0] * len(self.registers[args[0]])
            elif cmd in ("set_queue_rate", "set_queue_depth"):
                self.queue[f"{cmd} {' '.join(args[1:])}"] = int(args[0])
            else:
                out += f"*** Unknown syntax: {line}\n"
        return out + "RuntimeCmd: \n"


@pytest.fixture
def fake(monkeypatch, tmp_path):
    cli = tmp_path / "bin" / "simple_switch_CLI"
    cli.parent.mkdir()
    cli.write_text("#!/bin/sh\n")
    cli.chmod(0o755)
    monkeypatch.setenv("DCNLAB_P4_PREFIX", str(tmp_path))
    return FakeCLI({"DcnIngress.agg.agg_value": [0, 5, 7, 0]})


def test_register_read_write_reset(fake):
    ch = ThriftChannel("v3", 9093, runner=fake)
    assert ch.register_read("DcnIngress.agg.agg_value", 2) == 7
    assert ch.register_read("DcnIngress.agg.agg_value") == [0, 5, 7, 0]
    ch.register_write("DcnIngress.agg.agg_value", 3, 42)
    assert ch.register_read("DcnIngress.agg.agg_value", 3) == 42
    ch.register_reset("DcnIngress.agg.agg_value")
    assert ch.register_read("DcnIngress.agg.agg_value") == [0, 0, 0, 0]
    argv, _ = fake.calls[0]
    assert argv[-2:] == ["--thrift-port", "9093"] and argv[-3].endswith("simple_switch_CLI")


def test_errors_raise_with_switch_and_command(fake):
    ch = ThriftChannel("w1", 9091, runner=fake)
    with pytest.raises(ThriftError, match=r"w1: thrift command 'register_read nope 1' failed: Invalid register"):
        ch.register_read("nope", 1)
    with pytest.raises(ThriftError, match="Unknown syntax"):
        ch.run(["frobnicate"])


def test_queue_settings_batch_one_process(fake):
    ch = ThriftChannel("e0_0", 9090, runner=fake)
    ch.set_queues(depth=30, rate=500, ports=[0, 1, 2])
    assert len(fake.calls) == 1
    assert fake.queue == {"set_queue_depth 0": 30, "set_queue_rate 0": 500, "set_queue_depth 1": 30,
                          "set_queue_rate 1": 500, "set_queue_depth 2": 30, "set_queue_rate 2": 500}
    ch.set_queue_rate(100)
    assert fake.queue["set_queue_rate "] == 100
    with pytest.raises(ValueError, match="queue rate must be > 0"):
        ch.set_queue_rate(0)


def test_missing_cli_is_named(monkeypatch, tmp_path):
    monkeypatch.setenv("DCNLAB_P4_PREFIX", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(Exception, match="simple_switch_CLI not found"):
        ThriftChannel("x", 1).register_read("r", 0)


def test_failing_cli_process_names_the_switch(fake):
    import subprocess

    def broken(argv, stdin, netns=None):
        raise subprocess.CalledProcessError(1, argv, output="", stderr="Could not connect to thrift client")

    with pytest.raises(ThriftError, match=r"v7: thrift command .* failed: Could not connect to thrift client"):
        ThriftChannel("v7", 9097, runner=broken).register_read("r", 0)
