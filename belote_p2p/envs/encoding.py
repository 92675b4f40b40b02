"""One seat's observation as a NumPy vector, and its legal actions as a mask.

Seats are relative to the observing seat, in playing order (0: itself, 1: the next to play
after it, 2: its partner, 3: the one before it; with three players 1 and 2 are the next two,
with two 1 is the other player, and the slots of absent seats stay 0), so that one policy
serves every seat. The vector, float32, every entry in ``[0, 1]``, in blocks:

====================  =====  =========================================================
block                 size   content
====================  =====  =========================================================
hand                  32     the cards held
played                4×32   the cards each seat played this round (current trick too)
trick                 4×32   the cards on the table, by the seat that played them
turned                32     the turned card (classic)
voids                 4×32   the cards each seat has shown it does not hold
shown                 4×32   the cards each seat is known to hold (announced, belote...;
                             two-handed: every face-up card, never a face-down one)
bids                  4×74   every bidding action each seat made this round
phase                 6      one-hot: deal, take-first, take-second, auction, play, over
trump                 6      one-hot trump mode: 4 suits, no-trump, all-trump
taker, dealer,        3×4    one-hot seats
leader
contract              1      the contract's value / 500 (coinche)
multiplier            3      one-hot: plain, coinche, surcoinche
belote                4      each seat that announced belote
scores                4      each seat's game score (its team's with four seats) /
                             target (at most 1)
pending               1      litige points carried over / 500 (at most 1)
====================  =====  =========================================================
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from belote_p2p.game.engine import Phase
from belote_p2p.game.observation import Observation

from .actions import FIRST_BID, NUM_ACTIONS, action_index

_PHASES = tuple(Phase)
_BIDS = NUM_ACTIONS - FIRST_BID
_BLOCKS = (
    ("hand", 32),
    ("played", 4 * 32),
    ("trick", 4 * 32),
    ("turned", 32),
    ("voids", 4 * 32),
    ("shown", 4 * 32),
    ("bids", 4 * _BIDS),
    ("phase", len(_PHASES)),
    ("trump", 6),
    ("taker", 4),
    ("dealer", 4),
    ("leader", 4),
    ("contract", 1),
    ("multiplier", 3),
    ("belote", 4),
    ("scores", 4),
    ("pending", 1),
)
OFFSETS: dict[str, int] = {}
"""Where each block starts in the vector."""
_at = 0
for _name, _size in _BLOCKS:
    OFFSETS[_name] = _at
    _at += _size
OBS_SIZE = _at
"""The length of the observation vector."""

_BITS = np.array([1 << c for c in range(32)], dtype=np.int64)
_MULTIPLIERS = {1: 0, 2: 1, 4: 2}


def _put_mask(out: npt.NDArray[np.float32], at: int, mask: int) -> None:
    out[at : at + 32] = (mask & _BITS) != 0


def encode(obs: Observation) -> npt.NDArray[np.float32]:
    """The observation vector of ``obs`` (see the module for its layout)."""
    out = np.zeros(OBS_SIZE, dtype=np.float32)
    me = obs.seat
    n = obs.rules.seats

    def rel(seat: int) -> int:
        return (seat - me) % n

    _put_mask(out, OFFSETS["hand"], obs.hand_mask)
    played = [0, 0, 0, 0]
    for trick in obs.tricks:
        for i, c in enumerate(trick.cards):
            played[(trick.leader + i) % n] |= 1 << c
    on_table = [0, 0, 0, 0]
    for i, c in enumerate(obs.trick):
        on_table[(obs.leader + i) % n] |= 1 << c
    for seat in range(n):
        r = rel(seat)
        _put_mask(out, OFFSETS["played"] + 32 * r, played[seat] | on_table[seat])
        _put_mask(out, OFFSETS["trick"] + 32 * r, on_table[seat])
        _put_mask(out, OFFSETS["voids"] + 32 * r, obs.voids[seat])
        _put_mask(out, OFFSETS["shown"] + 32 * r, obs.shown[seat])
    if obs.turned is not None:
        out[OFFSETS["turned"] + obs.turned] = 1
    for seat, bid in obs.bids:
        out[OFFSETS["bids"] + _BIDS * rel(seat) + action_index(bid) - FIRST_BID] = 1
    out[OFFSETS["phase"] + _PHASES.index(obs.phase)] = 1
    if obs.trump >= 0:
        out[OFFSETS["trump"] + obs.trump] = 1
    for name, seat in (("taker", obs.taker), ("dealer", obs.dealer), ("leader", obs.leader)):
        if seat >= 0:
            out[OFFSETS[name] + rel(seat)] = 1
    out[OFFSETS["contract"]] = min(obs.contract / 500, 1.0)
    if obs.multiplier in _MULTIPLIERS:
        out[OFFSETS["multiplier"] + _MULTIPLIERS[obs.multiplier]] = 1
    for seat, _ in obs.belote:
        out[OFFSETS["belote"] + rel(seat)] = 1
    target = max(obs.rules.target, 1)
    for seat in range(n):
        side = seat % 2 if obs.rules.has_teams else seat
        out[OFFSETS["scores"] + rel(seat)] = min(obs.scores[side] / target, 1.0)
    out[OFFSETS["pending"]] = min(obs.pending / 500, 1.0)
    return out


def action_mask(obs: Observation) -> npt.NDArray[np.int8]:
    """1 at the index of each legal action of ``obs`` (all 0 when it is not its turn)."""
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    for action in obs.legal:
        mask[action_index(action)] = 1
    return mask
