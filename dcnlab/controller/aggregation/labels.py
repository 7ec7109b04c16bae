"""BCube(n,k) server labels as integers, with vectorised digit arithmetic (numpy).

A server ``v<i>`` has label ``i``; digit ``d`` of the label is the coefficient of ``n**d``
(``dcnlab.topos.bcube``: v11 in BCube(4,1) is ``23``, digit 1 = 2, digit 0 = 3). Two servers are one-hop
neighbours when their labels differ in exactly one digit ``d``: they share the level-``d`` switch.

Every tree algorithm works *relative to its receiver*: labels are rewritten digit by digit as
``x_d - r_d (mod n)`` (:meth:`LabelSpace.relabel`), which maps the receiver to 0, keeps every
Hamming distance and every "which digits differ" relation, and so turns each incast into an
incast towards server 0. The layer (stage) of a relabelled server is its number of non-zero
digits. Ties that the papers leave open are broken on relabelled labels, so a tree towards ``r`` is
the tree towards 0 shifted by ``r``: the algorithms are the same for every receiver.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dcnlab.topos.bcube import BCube


@dataclass(frozen=True)
class LabelSpace:
    """The label arithmetic of one BCube(n,k); ``K = k+1`` digits, ``N = n**K`` servers."""

    n: int
    k: int
    pow: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "pow", self.n ** np.arange(self.k + 1, dtype=np.int64))

    @classmethod
    def of(cls, fabric: BCube) -> LabelSpace:
        return cls(fabric.n, fabric.k)

    @property
    def K(self) -> int:
        return self.k + 1

    @property
    def N(self) -> int:
        return int(self.n ** self.K)

    # -- digits ----------------------------------------------------------------
    def digit(self, x: np.ndarray | int, d: int) -> np.ndarray:
        return (np.asarray(x, dtype=np.int64) // self.pow[d]) % self.n

    def digits(self, x: np.ndarray | int) -> np.ndarray:
        """Digit array with a trailing axis of length K (index d = digit d)."""
        x = np.asarray(x, dtype=np.int64)
        out = np.empty(x.shape + (self.K,), dtype=np.int64)
        n = self.n
        if n & (n - 1) == 0:                      # n a power of two: shifts and masks
            b = n.bit_length() - 1
            for d in range(self.K):
                np.bitwise_and(x >> (b * d), n - 1, out=out[..., d])
            return out
        rest = x.copy()
        for d in range(self.K):
            rest, out[..., d] = np.divmod(rest, n)
        return out

    def undigits(self, dig: np.ndarray) -> np.ndarray:
        return (np.asarray(dig, dtype=np.int64) * self.pow).sum(axis=-1)

    def layer(self, x: np.ndarray | int) -> np.ndarray:
        """Number of non-zero digits: the Hamming distance to server 0."""
        return np.count_nonzero(self.digits(x), axis=-1)

    def hamming(self, x: np.ndarray | int, y: np.ndarray | int) -> np.ndarray:
        return np.count_nonzero(self.digits(x) != self.digits(y), axis=-1)

    def relabel(self, x: np.ndarray | int, r: np.ndarray | int) -> np.ndarray:
        """Labels relative to receiver ``r`` (broadcasting): digit-wise ``x - r mod n``."""
        return self.undigits((self.digits(x) - self.digits(r)) % self.n)

    def unrelabel(self, x: np.ndarray | int, r: np.ndarray | int) -> np.ndarray:
        """Inverse of :meth:`relabel`."""
        return self.undigits((self.digits(x) + self.digits(r)) % self.n)

    def differing_dim(self, x: np.ndarray | int, y: np.ndarray | int) -> np.ndarray:
        """The (highest) digit in which one-hop neighbours ``x`` and ``y`` differ: the switch level."""
        diff = self.digits(x) != self.digits(y)
        return (self.K - 1 - np.argmax(diff[..., ::-1], axis=-1)).astype(np.int64)
