"""A double-dummy solver: the exact value of the rest of a round with every hand known.

Alpha-beta over the bitmask state of :class:`~belote_p2p.game.fastplay.FastState`, with a
transposition table at trick boundaries (bounds keyed by the four hands, the leader and who
may still take every trick), the best lead of a position tried first, cheap move ordering
(win cheaply, load a partner's trick, give little away), equivalent cards merged (touching
cards of a suit with the same points, no card still out nor the one winning the trick between
them: playing one or the other changes nothing), and bounds from the points still to play.

The value is **team 0's card points minus team 1's** over the rest of the round (the cards
already on the table in the current trick included, dix de der included), with a capot
scored as 250 and a générale as 500 for the whole round, as RULES.md §7 says: a capot makes
the whole-round difference ``±250`` (of 162 points otherwise; 130 in sans-atout). Add the
difference of the tricks already taken (``points[0] - points[1]`` of the ``FastState``) to
get the round's; the round score is a nondecreasing function of it
(:meth:`FastState.score_for`), so the double-dummy best play for the card points is also
the best play for the score.

``tricks`` bounds the work: the search then plays at most that many tricks (the current
one included) and values the position it reaches by a greedy double-dummy playout of the
rest (each seat, seeing every hand, cashes its masters, loads its partner's sure tricks,
wins cheaply or gives little away). With no bound the value is exact.
"""

from __future__ import annotations

from .cards import SUIT_MASKS
from .fastplay import ORDER, FastState, equivalent_groups
from .scoring import CAPOT_POINTS, GENERALE_POINTS
from .tables import ABOVE, ALL_TRUMP, BEATS, LAST_TRICK_BONUS, NO_TRUMP, POINTS, STRENGTH

INF = 10_000

# Who may still take every trick: a seat 0..3 (all tricks so far, alone), 4 + team (all so
# far, with both seats), NOBODY, or FRESH before the first trick.
NOBODY = 6
FRESH = 8


def _sweep_after(sweep: int, w: int) -> int:
    if sweep == FRESH:
        return w
    if sweep < 4:
        if w == sweep:
            return w
        return 4 + (w & 1) if (w ^ sweep) == 2 else NOBODY
    if sweep < 6:
        return sweep if (w & 1) == sweep - 4 else NOBODY
    return NOBODY


SWEEP = tuple(tuple(_sweep_after(s, w) for w in range(4)) for s in range(9))
"""``SWEEP[sweep][winner]``: the sweep state after ``winner`` takes a trick."""


def round_total(mode: int) -> int:
    """The card points of a whole round under ``mode``, dix de der included (162; 130 in
    sans-atout)."""
    return sum(POINTS[mode]) + LAST_TRICK_BONUS


def _bonuses(mode: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """Per sweep state: what it adds to team 0's difference at the end of the round, and
    the most it may still add to it or take from it."""
    gen = GENERALE_POINTS - round_total(mode)
    cap = CAPOT_POINTS - round_total(mode)
    return (
        (gen, -gen, gen, -gen, cap, -cap, 0, 0, 0),
        (gen, 0, gen, 0, cap, 0, 0, 0, gen),
        (0, gen, 0, gen, 0, cap, 0, 0, gen),
    )


BONUSES = tuple(_bonuses(mode) for mode in range(6))


def _byte_points() -> tuple[tuple[tuple[int, ...], ...], ...]:
    return tuple(
        tuple(
            tuple(
                sum(POINTS[mode][suit * 8 + r] for r in range(8) if b >> r & 1) for b in range(256)
            )
            for suit in range(4)
        )
        for mode in range(6)
    )


_BYTE_POINTS = _byte_points()


STRONGEST = tuple(
    tuple(tuple(o[0] if o else -1 for o in per_suit) for per_suit in per_mode) for per_mode in ORDER
)
"""``STRONGEST[mode][suit][byte]``: the strongest card of that byte of the suit (-1: none)."""
WEAKEST = tuple(
    tuple(tuple(o[-1] if o else -1 for o in per_suit) for per_suit in per_mode)
    for per_mode in ORDER
)
"""``WEAKEST[mode][suit][byte]``: the weakest card of that byte of the suit (-1: none)."""
KEYS = tuple(tuple(POINTS[m][c] * 32 + STRENGTH[m][c] for c in range(32)) for m in range(6))
"""``KEYS[mode][card]``: points, then strength, in one int (what a card is worth)."""


def remaining_points(f: FastState) -> int:
    """Card points still to be taken (hands and the current trick, dix de der included)."""
    h = f.hands
    live = h[0] | h[1] | h[2] | h[3]
    bp = _BYTE_POINTS[f.mode]
    pts = POINTS[f.mode]
    total = bp[0][live & 0xFF] + bp[1][live >> 8 & 0xFF] + bp[2][live >> 16 & 0xFF]
    total += bp[3][live >> 24] + sum(pts[c] for c in f.trick)
    return total + (LAST_TRICK_BONUS if f.tricks < 8 else 0)


def initial_sweep(f: FastState) -> int:
    """The sweep state of ``f`` from the tricks it has finished."""
    if f.tricks == 0:
        return FRESH
    w = f.wins
    if w & (w - 1) == 0:
        return w.bit_length() - 1
    if w & 0b1010 == 0:
        return 4
    if w & 0b0101 == 0:
        return 5
    return NOBODY


class Solver:
    """A search over one deal; what it proved stays in its table for the next call.

    ``tricks``: how many tricks the search plays before it values the position by a greedy
    playout (0: no limit, the exact value). ``nodes`` counts the positions searched."""

    def __init__(self, f: FastState, tricks: int = 0) -> None:
        if f.seats != 4:
            raise ValueError("the double-dummy solver plays four seats")
        self.root = f
        left = 8 - f.tricks
        self.horizon = max(left - tricks, 0) if tricks > 0 else 0
        """Tricks left at which the search stops and plays the rest out greedily."""
        self.nodes = 0
        self.table: dict[tuple[int, int, int, int, int, int], tuple[int, int, int]] = {}

    @property
    def exact(self) -> bool:
        return self.horizon == 0

    # The search is one closure per call so that every name it uses is a fast local.
    def _search(self, f: FastState, alpha: int, beta: int) -> int:
        hands = f.hands[:]
        mode = f.mode
        st = STRENGTH[mode]
        beats = BEATS[mode]
        pts = POINTS[mode]
        ptsget = pts.__getitem__
        stget = st.__getitem__
        above = ABOVE[mode]
        order = ORDER[mode]
        strongest = STRONGEST[mode]
        weakest = WEAKEST[mode]
        key = KEYS[mode]
        bytepts = _BYTE_POINTS[mode]
        kind = 1 if mode == NO_TRUMP else 2 if mode == ALL_TRUMP else 0
        tmask = SUIT_MASKS[mode] if kind == 0 else 0
        suits = SUIT_MASKS
        free = f.free
        over = f.overtrump
        table = self.table
        sweep_after = SWEEP
        bonus, upper_bonus, lower_bonus = BONUSES[mode]
        horizon = self.horizon
        nodes = 0

        def legal(hand: int, seat: int, led: int, top: int, win: int) -> int:
            m = hand & suits[led]
            if kind == 1:
                return m or hand
            if kind == 2 or led == mode:
                return (hand & above[top] or m or hand) if over else (m or hand)
            if m:
                return m
            if free and win ^ seat == 2:
                return hand
            if top >> 3 == mode:
                return hand & above[top] or hand & tmask or hand
            return hand & tmask or hand

        def moves(m: int, live: int) -> list[int]:
            """Cards of ``m``, strongest first within each suit, equivalent ones merged:
            ``live`` holds the cards that part two cards (the unplayed ones and, in a trick,
            the card winning it: the 9 and the 7 under an 8 on the table are not
            equivalent, one takes the trick and the other ducks it)."""
            out = []
            for suit in range(4):
                b = m >> (suit * 8) & 0xFF
                if not b:
                    continue
                prev = -1
                for c in order[suit][b]:
                    if (
                        prev >= 0
                        and pts[c] == pts[prev]
                        and not above[c] & ~above[prev] & ~(1 << prev) & live
                    ):
                        continue
                    out.append(c)
                    prev = c
            return out

        def beats_mask(m: int, top: int) -> int:
            """The cards of ``m`` that would take the trick from ``top``."""
            b = m & above[top]
            if kind == 0 and st[top] < 8:
                b |= m & tmask
            return b

        def last_trick(seat: int, sweep: int) -> int:
            """Each seat holds one card: play them."""
            c = hands[seat].bit_length() - 1
            top, win, tp = c, seat, pts[c]
            for i in (1, 2, 3):
                s = (seat + i) & 3
                d = hands[s].bit_length() - 1
                tp += pts[d]
                sd, stop = st[d], st[top]
                if (sd > stop and d >> 3 == top >> 3) or (sd >= 8 and stop < 8):
                    top, win = d, s
            tp += LAST_TRICK_BONUS
            return (tp if win & 1 == 0 else -tp) + bonus[sweep_after[sweep][win]]

        def lowest(m: int) -> int:
            """The card of ``m`` worth least: fewest points, then weakest."""
            best = -1
            bk = INF
            for suit in range(4):
                b = m >> (suit << 3) & 0xFF
                if b:
                    c = weakest[suit][b]
                    k = key[c]
                    if k < bk:
                        best, bk = c, k
            return best

        def holds(c: int, nxt: int, led: int) -> bool:
            """Whether the next seat (the only one of the other side still to play in the
            trick) cannot beat card ``c``."""
            if nxt & suits[led]:
                return not (c >> 3 == led and nxt & above[c])
            if kind == 0 and nxt & tmask:
                return st[c] >= 8 and not nxt & above[c]
            return True

        def greedy(h: list[int], live: int, seat: int, n: int, led: int, top: int, win: int) -> int:
            """The card a simple double-dummy policy plays (see the module)."""
            hand = h[seat]
            if n == 0:
                # Cash a master the opponents cannot ruff, the richest first.
                opp1, opp2 = h[(seat + 1) & 3], h[(seat + 3) & 3]
                best = -1
                bk = -1
                for suit in range(4):
                    b = hand >> (suit << 3) & 0xFF
                    if not b:
                        continue
                    c = strongest[suit][b]
                    if above[c] & live:
                        continue
                    sm = suits[suit]
                    if (
                        kind == 0
                        and suit != mode
                        and ((not opp1 & sm and opp1 & tmask) or (not opp2 & sm and opp2 & tmask))
                    ):
                        continue
                    if key[c] > bk:
                        best, bk = c, key[c]
                if best >= 0:
                    return best
                partner = h[(seat + 2) & 3]
                if kind == 0 and hand & tmask and (opp1 | opp2) & tmask:
                    # Draw trumps when the side holds more of them than the opponents.
                    ours = ((hand | partner) & tmask).bit_count()
                    if ours > ((opp1 | opp2) & tmask).bit_count():
                        return weakest[mode][hand >> (mode << 3) & 0xFF]
                m = hand & ~tmask or hand
                # A low card to the partner's master, or to a suit the partner ruffs.
                best = -1
                bk = INF
                for suit in range(4):
                    b = m >> (suit << 3) & 0xFF
                    if not b:
                        continue
                    pb = partner >> (suit << 3) & 0xFF
                    if pb:
                        ok = not above[strongest[suit][pb]] & live
                    else:
                        ok = kind == 0 and suit != mode and bool(partner & tmask)
                    if ok:
                        c = weakest[suit][b]
                        if key[c] < bk:
                            best, bk = c, key[c]
                if best >= 0:
                    return best
                return lowest(m)
            # The legal cards (RULES.md section 4).
            m = hand & suits[led]
            if kind == 1:
                m = m or hand
            elif kind == 2 or led == mode:
                m = (hand & above[top] or m or hand) if over else (m or hand)
            elif not m:
                if free and win ^ seat == 2:
                    m = hand
                elif top >> 3 == mode:
                    m = hand & above[top] or hand & tmask or hand
                else:
                    m = hand & tmask or hand
            if not m & (m - 1):
                return m.bit_length() - 1
            nxt = h[(seat + 1) & 3]
            if win ^ seat == 2:
                if n == 3 or holds(top, nxt, led):
                    # The partner's trick holds: load the richest plain card.
                    plain = m & ~tmask or m
                    best = -1
                    bk = -1
                    for suit in range(4):
                        b = plain >> (suit << 3) & 0xFF
                        if b:
                            c = strongest[suit][b]
                            if pts[c] > bk:
                                best, bk = c, pts[c]
                    return best
                # The last seat may take the partner's trick: take it over if it holds.
                w = beats_mask(m, top)
                best = -1
                bk = INF
                while w:
                    low = w & -w
                    c = low.bit_length() - 1
                    w ^= low
                    if key[c] < bk and holds(c, nxt, led):
                        best, bk = c, key[c]
                if best >= 0:
                    return best
                return lowest(m)
            w = beats_mask(m, top)
            if not w:
                return lowest(m)
            best = -1
            bk = INF
            if n == 3:
                # Last to play: the richest winner, sparing trumps.
                while w:
                    low = w & -w
                    c = low.bit_length() - 1
                    w ^= low
                    k = (20 if st[c] >= 8 else 0) - pts[c]
                    if k < bk:
                        best, bk = c, k
                return best
            # A winner the next seat cannot beat, the weakest; none: the lowest card (the
            # partner may still win the trick).
            while w:
                low = w & -w
                c = low.bit_length() - 1
                w ^= low
                if st[c] < bk and holds(c, nxt, led):
                    best, bk = c, st[c]
            if best >= 0:
                return best
            return lowest(m)

        def playout(seat: int, left: int, sweep: int) -> int:
            """The rest of the round played by :func:`greedy` from a trick boundary."""
            h = hands[:]
            live = h[0] | h[1] | h[2] | h[3]
            d = 0
            for t in range(left):
                c = greedy(h, live, seat, 0, 0, 0, 0)
                h[seat] ^= 1 << c
                live ^= 1 << c
                led, top, win, tp = c >> 3, c, seat, pts[c]
                for i in (1, 2, 3):
                    s = (seat + i) & 3
                    c = greedy(h, live, s, i, led, top, win)
                    h[s] ^= 1 << c
                    live ^= 1 << c
                    tp += pts[c]
                    if beats[top] >> c & 1:
                        top, win = c, s
                if t == left - 1:
                    tp += LAST_TRICK_BONUS
                d += tp if win & 1 == 0 else -tp
                sweep = sweep_after[sweep][win]
                seat = win
            return d + bonus[sweep]

        def lead(seat: int, left: int, sweep: int, alpha: int, beta: int) -> int:
            nonlocal nodes
            if left == 1:
                return last_trick(seat, sweep)
            key = (hands[0], hands[1], hands[2], hands[3], seat, sweep)
            if left <= horizon:
                entry = table.get(key)
                if entry is None:
                    v = playout(seat, left, sweep)
                    table[key] = (v, v, -1)
                    return v
                return entry[0]
            entry = table.get(key)
            first = -1
            live = hands[0] | hands[1] | hands[2] | hands[3]
            if entry is not None:
                lo, hi, first = entry
                if lo >= beta:
                    return lo
                if hi <= alpha:
                    return hi
                if lo == hi:
                    return lo
            else:
                total = (
                    bytepts[0][live & 0xFF]
                    + bytepts[1][live >> 8 & 0xFF]
                    + bytepts[2][live >> 16 & 0xFF]
                    + bytepts[3][live >> 24]
                    + LAST_TRICK_BONUS
                )
                hi = total + upper_bonus[sweep]
                lo = -total - lower_bonus[sweep]
                if lo >= beta:
                    return lo
                if hi <= alpha:
                    return hi
            nodes += 1
            a0, b0 = alpha, beta
            if lo > alpha:
                alpha = lo
            if hi < beta:
                beta = hi
            hand = hands[seat]
            cards = moves(hand, live)
            if len(cards) > 1:
                # Masters first, richest first; then the others, lowest first.
                cards.sort(key=lambda c: -100 - pts[c] if not above[c] & live else st[c])
                if first >= 0 and first in cards:
                    cards.remove(first)
                    cards.insert(0, first)
            maximize = seat & 1 == 0
            best = -INF if maximize else INF
            best_card = -1
            nxt = (seat + 1) & 3
            for c in cards:
                hands[seat] = hand ^ (1 << c)
                v = follow(nxt, 1, c >> 3, c, seat, pts[c], left, sweep, alpha, beta)
                hands[seat] = hand
                if maximize:
                    if v > best:
                        best, best_card = v, c
                        if v > alpha:
                            alpha = v
                            if alpha >= beta:
                                break
                elif v < best:
                    best, best_card = v, c
                    if v < beta:
                        beta = v
                        if alpha >= beta:
                            break
            if best <= a0:
                table[key] = (lo, best, best_card)
            elif best >= b0:
                table[key] = (best, hi, best_card)
            else:
                table[key] = (best, best, best_card)
            return best

        def follow(
            seat: int,
            n: int,
            led: int,
            top: int,
            win: int,
            tp: int,
            left: int,
            sweep: int,
            alpha: int,
            beta: int,
        ) -> int:
            nonlocal nodes
            nodes += 1
            hand = hands[seat]
            m = legal(hand, seat, led, top, win)
            if m & (m - 1):
                # The other cards on the table take no trick: only the top parts two cards.
                cards = moves(m, hands[0] | hands[1] | hands[2] | hands[3] | 1 << top)
                if len(cards) > 1:
                    # On a partner's trick the richest card that does not overtake first; able
                    # to win, the cheapest winner; unable, the poorest card.
                    beat = beats_mask(m, top)
                    if win ^ seat == 2:
                        cards.sort(key=ptsget, reverse=True)
                        if beat:
                            cards = [c for c in cards if not beat >> c & 1] + [
                                c for c in cards if beat >> c & 1
                            ]
                    else:
                        cards.sort(key=ptsget)
                        if beat:
                            winners = [c for c in cards if beat >> c & 1]
                            winners.sort(key=stget)
                            cards = winners + [c for c in cards if not beat >> c & 1]
            else:
                cards = [m.bit_length() - 1]
            maximize = seat & 1 == 0
            best = -INF if maximize else INF
            over = beats[top]
            for c in cards:
                if over >> c & 1:
                    ntop, nwin = c, seat
                else:
                    ntop, nwin = top, win
                hands[seat] = hand ^ (1 << c)
                if n == 3:
                    p = tp + pts[c]
                    if left == 1:
                        p += LAST_TRICK_BONUS
                    gain = p if nwin & 1 == 0 else -p
                    nsweep = sweep_after[sweep][nwin]
                    if left == 1:
                        v = gain + bonus[nsweep]
                    else:
                        v = gain + lead(nwin, left - 1, nsweep, alpha - gain, beta - gain)
                else:
                    v = follow((seat + 1) & 3, n + 1, led, ntop, nwin, tp + pts[c], left, sweep,
                               alpha, beta)  # fmt: skip
                hands[seat] = hand
                if maximize:
                    if v > best:
                        best = v
                        if v > alpha:
                            alpha = v
                            if alpha >= beta:
                                break
                elif v < best:
                    best = v
                    if v < beta:
                        beta = v
                        if alpha >= beta:
                            break
            return best

        try:
            if not f.trick:
                return lead(f.to_act, 8 - f.tricks, initial_sweep(f), alpha, beta)
            trick = f.trick
            return follow(
                f.to_act, len(trick), trick[0] >> 3, trick[f.best], (f.leader + f.best) & 3,
                sum(pts[c] for c in trick), 8 - f.tricks, initial_sweep(f), alpha, beta,
            )  # fmt: skip
        finally:
            self.nodes += nodes

    def _bisect(self, f: FastState, lo: int, hi: int, tolerance: int = 0) -> tuple[int, int]:
        """Zero-window searches halving ``[lo, hi]`` around the value until it is at most
        ``tolerance`` wide (0: the exact value, returned as ``(v, v)``)."""
        while hi - lo > tolerance:
            mid = (lo + hi + 1) // 2
            g = self._search(f, mid - 1, mid)
            if g >= mid:
                lo = g
            else:
                hi = g
        return lo, hi

    def value(self) -> int:
        """The value of the root (see the module)."""
        bound = remaining_points(self.root) + GENERALE_POINTS
        return self._bisect(self.root, -bound, bound)[0]

    def move_values(self) -> dict[int, int]:
        """The value (as :meth:`value`, from the root) after each legal card of the seat to
        act, every card included (equivalent cards are searched once)."""
        f = self.root.copy()
        out: dict[int, int] = {}
        p = f.points
        base = p[0] - p[1]
        bound = remaining_points(f) + GENERALE_POINTS
        for group in equivalent_groups(f):
            c = group[0]
            f.push(c)
            if f.tricks == 8:
                cp = f.card_points()
                v = cp[0] - cp[1] - base
            else:
                gained = p[0] - p[1] - base
                v = gained + self._bisect(f, -bound - gained, bound - gained)[0]
            f.pop()
            for d in group:
                out[d] = v
        return out


def solve(f: FastState, tricks: int = 0) -> int:
    """Team 0's card points minus team 1's over the rest of ``f``'s round, both sides
    playing perfectly with every hand known (capot 250, générale 500)."""
    return Solver(f, tricks).value()


def solve_moves(f: FastState, tricks: int = 0) -> dict[int, int]:
    """The value (as :func:`solve`) after each legal card of the seat to act."""
    return Solver(f, tricks).move_values()
