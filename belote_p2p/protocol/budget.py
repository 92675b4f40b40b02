"""A byte budget over time (a token bucket), sans-io: the clock is passed in.

One budget serves every place where a party may make us move bytes for it: the relay
charges each relayed link (both directions: the seat whose sync request made the other
answer pays through the link it asked on, ``PROTOCOL.md`` §8.2), and a peer charges its
sync answers to the seat that asked for them, across that seat's reconnections (§6.4).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class ByteBudget:
    """``burst`` bytes at once, refilled at ``rate`` bytes per second up to ``burst``."""

    rate: float
    burst: float
    tokens: float
    at: float
    """When :attr:`tokens` was last brought up to date."""

    @classmethod
    def full(cls, rate: float, burst: float, now: float) -> ByteBudget:
        return cls(rate, burst, burst, now)

    def refill(self, now: float) -> float:
        """The bytes available at ``now``."""
        if now > self.at:
            self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
            self.at = now
        return self.tokens

    def spend(self, size: int, now: float) -> bool:
        """Take ``size`` bytes if they are available (and return True), else take nothing."""
        if size > self.refill(now):
            return False
        self.tokens -= size
        return True
