"""BCube(n,k): n^(k+1) servers, k+1 levels of n^k n-port switches.

Naming follows the examples of IRS/SRS (Guo et al.), §2.1 and Figs. 1-3:

* server ``v<i>``: label = the k+1 base-n digits of i, written x_k…x_0
  (in BCube(4,1), v11 = 23).  Server port j (0..k) goes to its level-j switch;
  port k+1 goes to its attached host ``h<i>``.
* switch ``w<l·n^k + s>``: the level-l switch whose label s is the server label
  with digit l removed.  Switch port i goes to the server whose digit l is i.

Servers are programmable relay nodes (role ``server``): in emulation each one
is a P4 switch with its host attached, like the papers' ServerSwitch NIC.
Labels are tuples most-significant digit first, e.g. v11 in BCube(4,1) is (2, 3).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from dcnlab.topos.addressing import MAX_HOSTS
from dcnlab.topos.errors import SpecError, check_range
from dcnlab.topos.model import Fabric, Link, Node, Role
from dcnlab.topos.numbers import MAX_DIGITS, UINT


def digits(value: int, n: int, width: int) -> tuple[int, ...]:
    """Base-n digits of ``value``, most significant first, ``width`` long."""
    out = [0] * width
    for pos in range(width - 1, -1, -1):
        value, out[pos] = divmod(value, n)
    return tuple(out)


def undigits(label: tuple[int, ...] | list[int], n: int) -> int:
    v = 0
    for d in label:
        v = v * n + d
    return v


@dataclass(frozen=True)
class BCube(Fabric):
    n: int
    k: int
    kind = "bcube"

    def __post_init__(self) -> None:
        check_range("bcube", "n", self.n, 2)
        check_range("bcube", "k", self.k, 0)
        # n >= 2, so n^(k+1) >= 2^(k+1): bound k before the power is computed (k=10^9 would never end)
        if self.k + 1 >= MAX_HOSTS.bit_length() + 1 or self.n ** (self.k + 1) > MAX_HOSTS:
            raise SpecError(
                f"bcube: n^(k+1) = {self.n}^{self.k + 1} servers exceeds the address plan; "
                f"valid: n^(k+1) <= {MAX_HOSTS}")

    @property
    def params(self) -> dict[str, int | str]:
        return {"n": self.n, "k": self.k}

    # -- sizes ------------------------------------------------------------
    @property
    def num_servers(self) -> int:
        return self.n ** (self.k + 1)

    @property
    def switches_per_level(self) -> int:
        return self.n ** self.k

    def counts(self) -> dict[Role, int]:
        return {Role.SERVER: self.num_servers, Role.SWITCH: (self.k + 1) * self.switches_per_level,
                Role.HOST: self.num_servers}

    def num_links(self) -> int:
        return self.num_servers * (self.k + 2)

    def diameter(self) -> int:
        """Server-to-server, in links: 2(k+1), as the papers count it."""
        return 2 * (self.k + 1)

    # -- labels -----------------------------------------------------------
    def server_label(self, i: int) -> tuple[int, ...]:
        return digits(i, self.n, self.k + 1)

    def digit(self, i: int, j: int) -> int:
        """Digit j (coefficient of n^j) of server index i."""
        return (i // self.n ** j) % self.n

    def with_digit(self, i: int, j: int, value: int) -> int:
        p = self.n ** j
        return i + (value - (i // p) % self.n) * p

    def switch_of(self, server: int, level: int) -> int:
        """Index s of the level-``level`` switch of ``server`` (label without digit ``level``)."""
        p = self.n ** level
        return (server // (p * self.n)) * p + server % p

    def switch_member(self, level: int, s: int, port: int) -> int:
        """Server index on port ``port`` of level-``level`` switch ``s``."""
        p = self.n ** level
        high, low = divmod(s, p)
        return (high * self.n + port) * p + low

    def switch_number(self, level: int, s: int) -> int:
        return level * self.switches_per_level + s

    # -- names ------------------------------------------------------------
    def server_name(self, i: int) -> str:
        return f"v{i}"

    def switch_name(self, level: int, s: int) -> str:
        return f"w{self.switch_number(level, s)}"

    def host_name(self, index: int) -> str:
        return f"h{index}"

    def host_attachment(self, index: int) -> tuple[str, int]:
        return self.server_name(index), self.k + 1

    def _parse(self, name: str) -> tuple[str, int]:
        if not 2 <= len(name) <= MAX_DIGITS + 1 or name[0] not in "vwh" or not UINT.fullmatch(name[1:]):
            raise KeyError(name)
        idx = int(name[1:])
        limit = self.num_servers if name[0] != "w" else (self.k + 1) * self.switches_per_level
        if idx >= limit or str(idx) != name[1:]:
            raise KeyError(name)
        return name[0], idx

    def node(self, name: str) -> Node:
        kind, idx = self._parse(name)
        if kind == "v":
            return Node(name, Role.SERVER, self.server_label(idx), self.k + 2, "server")
        if kind == "h":
            return Node(name, Role.HOST, self.server_label(idx), 1, "host")
        level, s = divmod(idx, self.switches_per_level)
        return Node(name, Role.SWITCH, (level,) + digits(s, self.n, self.k), self.n, f"level{level}")

    def nodes(self) -> Iterator[Node]:
        for i in range(self.num_servers):
            yield Node(self.server_name(i), Role.SERVER, self.server_label(i), self.k + 2, "server")
        for level in range(self.k + 1):
            for s in range(self.switches_per_level):
                yield Node(self.switch_name(level, s), Role.SWITCH,
                           (level,) + digits(s, self.n, self.k), self.n, f"level{level}")
        for i in range(self.num_servers):
            yield Node(self.host_name(i), Role.HOST, self.server_label(i), 1, "host")

    def peer(self, name: str, port: int) -> tuple[str, int] | None:
        kind, idx = self._parse(name)
        if kind == "v":
            if 0 <= port <= self.k:
                return self.switch_name(port, self.switch_of(idx, port)), self.digit(idx, port)
            if port == self.k + 1:
                return self.host_name(idx), 0
            return None
        if kind == "h":
            return (self.server_name(idx), self.k + 1) if port == 0 else None
        if not 0 <= port < self.n:
            return None
        level, s = divmod(idx, self.switches_per_level)
        return self.server_name(self.switch_member(level, s, port)), level

    def links(self) -> Iterator[Link]:
        for i in range(self.num_servers):
            for j in range(self.k + 1):
                yield Link(self.server_name(i), j, self.switch_name(j, self.switch_of(i, j)), self.digit(i, j))
        for i in range(self.num_servers):
            yield Link(self.server_name(i), self.k + 1, self.host_name(i), 0)
