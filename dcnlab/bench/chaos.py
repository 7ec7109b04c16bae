"""``dcnlab bench chaos``: kill -9 a ``dcnlab run`` at a random moment, clean, look for leftovers.

Each cycle starts ``dcnlab run SPEC --hold H`` in a run root of its own, kills the dcnlab process
with SIGKILL after a random delay (uniform over its bring-up and run), runs ``dcnlab clean``, and
then checks two things:

* nothing of the run is left: no process carrying its tag or recorded by it, no network
  namespace, no socket in its run directory, and the run is marked finished;
* nothing else changed: the machine's interfaces, its named network namespaces and its firewall
  rules are as before, and the canaries live: processes named like ours (``simple_switch_grpc``,
  ``bash``), a veth pair in the machine's namespace named like a run's (``e0_0-eth0``), and a
  namespace named ``dcnlab-canary-*``. They are what a clean that kills by name would hit.

Needs root and BMv2. Figures, not assertions; ``tests/test_chaos_bmv2.py`` runs a few cycles.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from dcnlab.emu.counters import node_of


@dataclass
class MachineState:
    interfaces: set[str]
    namespaces: set[str]
    firewall: str

    @classmethod
    def now(cls) -> MachineState:
        fw = "".join(subprocess.run([t, "-w", "-S"], capture_output=True, text=True).stdout
                     for t in ("iptables", "ip6tables") if shutil.which(t))
        # Other dcnlab runs on the machine come and go meanwhile; the canaries check that no clean
        # touched a namespace that is not its own.
        ns = {n for n in (os.listdir("/run/netns") if os.path.isdir("/run/netns") else ())
              if not n.startswith("dcnlab-") or n.startswith("dcnlab-canary-")}
        return cls(set(os.listdir("/sys/class/net")), ns, fw)

    def changes_since(self, before: MachineState, nodes: set[str] | frozenset[str] = frozenset()) -> list[str]:
        """What the run or its clean changed on the machine. Interfaces: one of the run's fabric (``nodes``) left
        in the machine's namespace, or one named as dcnlab names interfaces (``<node>-eth<i>``, what a clean
        that deletes by name would hit) gone. Other work on the machine adds and deletes interfaces of its own
        meanwhile (another suite's test machines' ``dcm*`` veths): those are neither the run's nor the clean's
        doing and are not counted; the canaries catch a clean that deletes what is not its own."""
        out = []
        left = sorted(n for n in self.interfaces - before.interfaces if node_of(n) in nodes)
        gone = sorted(n for n in before.interfaces - self.interfaces if node_of(n) is not None)
        if left:
            out.append(f"interfaces of the run left: {left}")
        if gone:
            out.append(f"interfaces deleted: {gone}")
        if self.namespaces != before.namespaces:
            out.append(f"namespaces {sorted(self.namespaces ^ before.namespaces)}")
        if self.firewall != before.firewall:
            out.append("firewall rules changed")
        return out


class Canaries:
    """Things that look like a run's but are not: they must survive every clean."""

    def __init__(self) -> None:
        tag = f"{os.getpid() % 100000}"
        self.netns = f"dcnlab-canary-{tag}"
        self.veth = ("e0_0-eth0", "c0-eth0")
        self.procs = [subprocess.Popen(["bash", "-c", f"exec -a {name} sleep 86400"], start_new_session=True)
                      for name in ("simple_switch_grpc", "bash", "mnexec")]
        subprocess.run(["ip", "netns", "add", self.netns], check=True, capture_output=True)
        self.own_veth = subprocess.run(["ip", "link", "add", self.veth[0], "type", "veth", "peer", "name",
                                        self.veth[1]], capture_output=True).returncode == 0

    def dead(self) -> list[str]:
        out = [f"canary process {p.pid} killed" for p in self.procs if p.poll() is not None]
        if not os.path.exists(f"/run/netns/{self.netns}"):
            out.append(f"canary namespace {self.netns} deleted")
        if self.own_veth and not os.path.exists(f"/sys/class/net/{self.veth[0]}"):
            out.append(f"canary interface {self.veth[0]} deleted")
        return out

    def close(self) -> None:
        for p in self.procs:
            p.kill()
            p.wait()
        subprocess.run(["ip", "netns", "del", self.netns], capture_output=True)
        if self.own_veth:
            subprocess.run(["ip", "link", "del", self.veth[0]], capture_output=True)


@dataclass
class Cycle:
    index: int
    kill_after: float
    phase: str
    leftovers: list[str] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)
    clean_s: float = 0.0


def cycle(i: int, spec: str, hold: float, rng: random.Random, run_root: Path, max_delay: float,
          canaries: Canaries) -> Cycle:
    before = MachineState.now()
    env = dict(os.environ, DCNLAB_RUN_ROOT=str(run_root))
    delay = rng.uniform(0.0, max_delay)
    p = subprocess.Popen([sys.executable, "-m", "dcnlab", "run", spec, "--hold", str(hold)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    t0 = time.monotonic()
    phase = "bring-up"
    os.set_blocking(p.stderr.fileno(), False)
    buf = ""
    while time.monotonic() - t0 < delay and p.poll() is None:
        time.sleep(0.01)
        try:
            buf += p.stderr.read() or ""
        except (BlockingIOError, TypeError):
            pass
        if " up in " in buf:
            phase = "run"
    if p.poll() is None:
        p.send_signal(signal.SIGKILL)
    else:
        phase = "finished"
    p.wait()
    p.stderr.close()
    t = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "dcnlab", "clean"], capture_output=True, text=True, env=env)
    c = Cycle(i, delay, phase, clean_s=time.monotonic() - t)
    if r.returncode != 0:
        c.leftovers.append(f"dcnlab clean failed: {r.stderr.strip()[-300:]}")
    from dcnlab.emu.cleanup import leftovers
    c.leftovers += leftovers(run_root)
    from dcnlab.topos.spec import parse_spec
    nodes = {n.name for n in parse_spec(spec).nodes()}
    c.changes = MachineState.now().changes_since(before, nodes) + canaries.dead()
    return c


def run_chaos(cycles: int, spec: str, hold: float, seed: int, max_delay: float,
              progress=lambda c: None) -> list[Cycle]:
    rng = random.Random(seed)
    out = []
    canaries = Canaries()
    try:
        with tempfile.TemporaryDirectory(prefix="dcnlab-chaos-") as d:
            for i in range(cycles):
                c = cycle(i, spec, hold, rng, Path(d) / f"c{i}", max_delay, canaries)
                out.append(c)
                progress(c)
    finally:
        canaries.close()
    return out


def cmd_bench_chaos(args: argparse.Namespace) -> int:
    from dcnlab.emu import preflight

    preflight.require("dcnlab bench chaos")     # each cycle runs `dcnlab run`: root and the whole toolchain
    from dcnlab.sweep.progress import Progress
    bar = Progress(args.cycles, "chaos", unit="cycle")

    def tick(c: Cycle) -> None:
        bar.update(1)
        if c.leftovers or c.changes:
            bar.write(f"cycle {c.index}: killed after {c.kill_after:.2f} s ({c.phase}): {c.leftovers + c.changes}")

    res = run_chaos(args.cycles, args.spec, args.hold, args.seed, args.max_delay, tick)
    bar.close()
    phases = {ph: sum(1 for c in res if c.phase == ph) for ph in ("bring-up", "run", "finished")}
    bad = [c for c in res if c.leftovers or c.changes]
    print(f"chaos {args.spec}: {len(res)} cycles (killed during bring-up {phases['bring-up']}, during the run "
          f"{phases['run']}, after it finished {phases['finished']}); cycles with leftovers or changes: {len(bad)}; "
          f"clean took {min(c.clean_s for c in res):.2f}-{max(c.clean_s for c in res):.2f} s")
    return 1 if bad else 0


