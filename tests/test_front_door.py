"""One layer under the scripting API and the commands ("one front door").

``dcnlab run``, ``dcnlab lab`` and ``dcnlab.Network`` all bring a fabric up through
:class:`dcnlab.emu.network.FabricNetwork` configured by one :class:`dcnlab.emu.options.NetOptions`: the CLI
builds it in :func:`dcnlab.cli.run.net_options`, ``Network(**options)`` takes its fields by name. So that the
two cannot drift apart, every field of ``NetOptions`` is either reachable from both or listed here, with the
reason it is not an option of ``run``/``lab``; a new field fails this test until someone decides."""

from __future__ import annotations

import inspect
from dataclasses import fields

import pytest

from dcnlab.cli import build_parser
from dcnlab.cli.run import net_options
from dcnlab.emu.options import NetOptions

API_ONLY = {
    "agents": "the traffic agents: scripts use them (Network(agents=True)); run checks reachability without them",
    "routes": "False leaves the tables empty for a script's own entries; run always routes (or --no-controller)",
    "monitor": "the switch-liveness monitor a script may turn on; run has --watch",
    "monitor_interval": "its period",
    "host_command_timeout": "a script's host commands; lab's --exec has its own guard",
    "max_switches": "the size bound; the CLI checks it through SizeLimit before bring-up",
    "thrift_base": "the first Thrift port inside the run's namespace; nothing outside can reach it",
    "bmv2_args": "extra simple_switch_grpc arguments for a script that needs them",
}


@pytest.mark.parametrize("command", ["run", "lab"])
def test_every_option_of_the_network_is_reachable_from_the_command_or_said_why_not(command, tmp_path):
    parser = build_parser()
    argv = [command, "fattree:k=4" if command == "run" else str(tmp_path)]
    args = parser.parse_args(argv)
    assert isinstance(net_options(args), NetOptions)
    source = "".join(inspect.getsource(net_options).split())
    names = {f.name for f in fields(NetOptions)}
    cli = {n for n in names if f"{n}=" in source}           # the fields net_options sets from the arguments
    assert cli | set(API_ONLY) == names, sorted(names - cli - set(API_ONLY))


def test_the_api_takes_every_network_option_by_name():
    from dcnlab import api

    assert set(api._OPTION_NAMES) == {f.name for f in fields(NetOptions)}
