"""The 3-tier k-ary fat-tree (Al-Fares et al.): k pods, k³/4 hosts.

Wiring and port numbering (h = k/2):

* edge ``e<pod>_<i>``: ports 0..h-1 to hosts, port h+j to aggregation switch j of its pod;
* aggregation ``a<pod>_<j>``: port i to edge i, port h+c to core ``c<j·h + c>``;
* core ``c<x>``: port pod to aggregation ``a<pod>_<x // h>``;
* host ``h<pod>_<i>_<x>`` (index pod·h² + i·h + x) on port x of edge i.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from dcnlab.topos.addressing import MAX_HOSTS
from dcnlab.topos.errors import SpecError, check_range
from dcnlab.topos.model import Fabric, Link, Node, Role, parse_name


@dataclass(frozen=True)
class FatTree(Fabric):
    k: int
    kind = "fattree"

    def __post_init__(self) -> None:
        check_range("fattree", "k", self.k, 2)
        if self.k % 2:
            raise SpecError(f"fattree: parameter k={self.k} must be even; valid: k = 2, 4, 6, ...")
        if self.k ** 3 // 4 > MAX_HOSTS:
            raise SpecError(f"fattree: k={self.k} gives {self.k ** 3 // 4} hosts, more than the address plan's "
                            f"{MAX_HOSTS}; valid: 2 <= k <= 406")

    @property
    def params(self) -> dict[str, int | str]:
        return {"k": self.k}

    @property
    def half(self) -> int:
        return self.k // 2

    def counts(self) -> dict[Role, int]:
        k = self.k
        return {Role.SWITCH: k * k // 4 + k * k, Role.HOST: k ** 3 // 4}

    def num_links(self) -> int:
        return 3 * self.k ** 3 // 4

    def diameter(self) -> int:
        return 6

    # -- names and labels ------------------------------------------------------
    def host_name(self, index: int) -> str:
        pod, rest = divmod(index, self.half ** 2)
        return f"h{pod}_{rest // self.half}_{rest % self.half}"

    def host_attachment(self, index: int) -> tuple[str, int]:
        pod, rest = divmod(index, self.half ** 2)
        return f"e{pod}_{rest // self.half}", rest % self.half

    def _parse(self, name: str) -> tuple[str, tuple[int, ...]]:
        h, k = self.half, self.k
        return parse_name(name, {"h": (k, h, h), "e": (k, h), "a": (k, h), "c": (h * h,)})

    def _make(self, kind: str, nums: tuple[int, ...]) -> Node:
        name = kind + "_".join(str(v) for v in nums)
        if kind == "h":
            return Node(name, Role.HOST, nums, 1, "host")
        if kind == "c":
            x = nums[0]
            return Node(name, Role.SWITCH, (x // self.half, x % self.half), self.k, "core")
        return Node(name, Role.SWITCH, nums, self.k, "edge" if kind == "e" else "agg")

    def node(self, name: str) -> Node:
        return self._make(*self._parse(name))

    def nodes(self) -> Iterator[Node]:
        h, k = self.half, self.k
        for x in range(h * h):
            yield self._make("c", (x,))
        for pod in range(k):
            for j in range(h):
                yield self._make("a", (pod, j))
        for pod in range(k):
            for i in range(h):
                yield self._make("e", (pod, i))
        for idx in range(k ** 3 // 4):
            pod, rest = divmod(idx, h * h)
            yield self._make("h", (pod, rest // h, rest % h))

    def peer(self, name: str, port: int) -> tuple[str, int] | None:
        kind, nums = self._parse(name)
        h = self.half
        if kind == "h":
            return (f"e{nums[0]}_{nums[1]}", nums[2]) if port == 0 else None
        if not 0 <= port < self.k:
            return None
        if kind == "e":
            pod, i = nums
            return (f"h{pod}_{i}_{port}", 0) if port < h else (f"a{pod}_{port - h}", i)
        if kind == "a":
            pod, j = nums
            return (f"e{pod}_{port}", h + j) if port < h else (f"c{j * h + port - h}", pod)
        x = nums[0]
        return f"a{port}_{x // h}", h + x % h

    def links(self) -> Iterator[Link]:
        h, k = self.half, self.k
        for pod in range(k):
            for j in range(h):
                for c in range(h):
                    yield Link(f"c{j * h + c}", pod, f"a{pod}_{j}", h + c)
        for pod in range(k):
            for j in range(h):
                for i in range(h):
                    yield Link(f"a{pod}_{j}", i, f"e{pod}_{i}", h + j)
        for pod in range(k):
            for i in range(h):
                for x in range(h):
                    yield Link(f"e{pod}_{i}", x, f"h{pod}_{i}_{x}", 0)
