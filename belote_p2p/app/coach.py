"""The coach in words: the analysis of a game (``belote-p2p analyse``), a hint at the table,
the line after a round, and a player's progress, in the reader's language.

The analysis itself is :mod:`belote_p2p.players.analysis` (pure); here it is made
(:func:`make_coach`: the ``expert`` bot, with a larger budget than at a table, for the
information-set view; the double-dummy solver for hindsight) and said. What programs read
(the JSON line of ``analyse``) stays English: :meth:`GameAnalysis.to_json`.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import trio

from belote_p2p.game.cards import Card
from belote_p2p.game.engine import Action, Bid, Phase, RoundRecord
from belote_p2p.game.observation import Observation
from belote_p2p.i18n import N_, _, format_number, ngettext
from belote_p2p.players.analysis import (
    Coach,
    Decision,
    GameAnalysis,
    Hint,
    Reason,
    RoundAnalysis,
    SeatSummary,
    evaluator,
)
from belote_p2p.players.bots import make_bot
from belote_p2p.players.hindsight import (
    EXACT_TRICKS,
    FEW_EXACT_TRICKS,
    SEARCH_TRICKS,
    Hindsight,
    Method,
)

from .wording import action_text, bid_choice_text, bid_text, card_text, trump_text

COACH_BOT = "expert:samples=128:bid_samples=96"
"""The information-set view's evaluator: the ``expert`` bot with twice its table
budget of worlds for a card (four times at two seats) and for a classic bid (as many as at
a table for a coinche bid), so that its reckoning of a choice is steadier than the
choice of an ``expert`` at a table."""
BIDDER_BOT = "rules"
"""Who bids the rest of an auction in the hindsight view of a bid."""

REASONS = {
    Reason.ONLY: N_("Every choice is worth the same here."),
    Reason.CASH_MASTER: N_("No card still out beats it: it takes the trick."),
    Reason.LEAD: N_("Of your leads, it does best."),
    Reason.LOAD_PARTNER: N_("Your partner holds the trick: give it points."),
    Reason.TAKE_LAST: N_("Last to play, it takes the trick."),
    Reason.TAKE: N_("It takes the trick for now."),
    Reason.TRUMP: N_("It trumps the trick."),
    Reason.DUCK: N_("It gives the least away."),
    Reason.TAKE_CONTRACT: N_("That contract pays more on average than passing."),
    Reason.PASS: N_("Passing does better on average than any contract."),
    Reason.DOUBLE: N_("The contract fails more often than not: doubling pays."),
}
"""Why the expert chooses what it does, a sentence each (:class:`Reason`)."""


def make_coach(spec: str = COACH_BOT, *, hindsight: bool = True, seed: int = 0) -> Coach:
    """A coach whose information-set view is the bot ``spec`` (it must value every legal
    action: :func:`~belote_p2p.players.analysis.evaluator`), with the hindsight view or not.
    ``BotError``/``NotAnEvaluator`` for a bot that will not do."""
    seen = Hindsight(make_bot(BIDDER_BOT)) if hindsight else None
    return Coach(evaluator(make_bot(spec)), seen, seed=seed)


# -- pieces ---------------------------------------------------------------------------------------


def points_text(x: float) -> str:
    """A loss or a value in round points, as a whole number the reader's way."""
    return format_number(round(x) or 0)


def signed_text(x: float) -> str:
    """A value with its sign: ``+24``, ``-12``, ``0``."""
    n = round(x)
    return format_number(n, sign=True) if n else "0"


def method_text(method: str, seats: int) -> str:
    """How the hindsight view valued a decision (a :class:`Method`'s value), with its
    limits."""
    if method == Method.EXACT.value:
        tricks = EXACT_TRICKS if seats == 4 else FEW_EXACT_TRICKS.get(seats, 0)
        return ngettext(
            "exact, searched to the round's end, from {n} trick left",
            "exact, searched to the round's end, from {n} tricks left",
            tricks,
        ).format(n=tricks)
    if method == Method.SEARCH.value:
        return ngettext(
            "earlier, the next {n} trick searched exactly, then a greedy playout (an estimate)",
            "earlier, the next {n} tricks searched exactly, then a greedy playout (an estimate)",
            SEARCH_TRICKS,
        ).format(n=SEARCH_TRICKS)
    if method == Method.GREEDY.value:
        return _("earlier, each card followed by a greedy playout of the rest (an estimate)")
    return _(
        "a bid, by the contract it leads to (the rest of the bidding by the rules bot), "
        "played out so from its first card"
    )


def choice_text(action: Action) -> str:
    """A choice made or advised: a card (``K♥``) or a bid as offered (``take``, ``pass``,
    ``90 ♥``)."""
    if isinstance(action, Bid):
        return bid_choice_text(action)
    return action_text(action)


def place_text(d: Decision) -> str:
    """``Round 2, trick 3`` or ``Round 2, bidding``."""
    if d.phase is Phase.PLAY:
        return _("Round {round}, trick {trick}").format(round=d.round + 1, trick=d.trick_number)
    return _("Round {round}, bidding").format(round=d.round + 1)


def position_text(d: Decision, names: Sequence[str]) -> str:
    """What the seat saw: its hand, and the cards on the table or the turned card, the
    trump and who took."""
    o = d.observation
    hand = " ".join(card_text(c) for c in o.hand)
    parts = [_("hand {cards}").format(cards=hand)]
    if o.phase is Phase.PLAY:
        if not o.trick:
            parts.append(_("{name} to lead").format(name=names[o.seat]))
        else:
            trick = " ".join(card_text(c) for c in o.trick)
            parts.append(
                _("on the table {cards} ({name} led)").format(cards=trick, name=names[o.leader])
            )
        if o.taker >= 0:
            parts.append(
                _("trump {trump}, {name} took").format(
                    trump=trump_text(o.trump), name=names[o.taker]
                )
            )
        else:
            parts.append(_("trump {trump}").format(trump=trump_text(o.trump)))
    else:
        if o.turned is not None:
            parts.append(_("turned {card}").format(card=card_text(o.turned)))
        if o.bids:
            said = ", ".join(f"{names[seat]} {bid_text(b)}" for seat, b in o.bids)
            parts.append(_("bids so far {bids}").format(bids=said))
    return "; ".join(parts)


def decision_text(d: Decision) -> str:
    """``8♥ instead of K♦: 173 points lost (every hand seen: K♦ best, 178 lost)``."""
    made = choice_text(d.action)
    informed, seen = d.informed, d.hindsight
    if informed is None or informed.loss is None:
        said = _("{choice} (the expert does not value it)").format(choice=made)
    elif informed.loss > 0:
        said = _("{choice} instead of {best}: {points} points lost").format(
            choice=made, best=choice_text(informed.best), points=points_text(informed.loss)
        )
    else:
        said = _("{choice}, as the expert chooses").format(choice=made)
    if seen is not None and seen.loss is not None:
        if seen.loss > 0:
            hindsight = _("every hand seen: {best} best, {points} lost").format(
                best=choice_text(seen.best), points=points_text(seen.loss)
            )
        else:
            hindsight = _("every hand seen: the best")
        said = _("{said} ({hindsight})").format(said=said, hindsight=hindsight)
    return said


def summary_text(s: SeatSummary) -> str:
    """``54 decisions: 143 points lost as the player knew it (2.6 a decision); 532 with
    every hand seen (9.9 a decision)``."""
    text = ngettext(
        "{n} decision: {points} points lost as the player knew it ({mean} a decision); "
        "{seen} with every hand seen ({seen_mean} a decision)",
        "{n} decisions: {points} points lost as the player knew it ({mean} a decision); "
        "{seen} with every hand seen ({seen_mean} a decision)",
        s.decisions,
    ).format(
        n=format_number(s.decisions),
        points=points_text(s.points_lost),
        mean=format_number(s.mean_loss, 1),
        seen=points_text(s.hindsight_points_lost),
        seen_mean=format_number(s.hindsight_mean_loss, 1),
    )
    unvalued = s.decisions - s.valued
    if unvalued:
        text += " " + ngettext(
            "({n} decision the expert does not value)",
            "({n} decisions the expert does not value)",
            unvalued,
        ).format(n=format_number(unvalued))
    return text


# -- the report -----------------------------------------------------------------------------------


def report_lines(
    analysis: GameAnalysis,
    names: Sequence[str],
    *,
    title: str,
    hints: bool = False,
) -> list[str]:
    """The ``analyse`` report: how each view judges, then each seat's summary and its
    costliest decisions with their positions."""
    seats = analysis.rules.seats
    lines = [
        title,
        _(
            "Each decision is valued twice: as the player knew it (the expert bot's reckoning "
            "from that seat's cards and what the table showed: the fair measure of a "
            "mistake), and with every hand seen (hindsight)."
        ),
        _(
            "A loss is the round points the best choice was worth more than the one made; "
            "it is never below zero."
        ),
    ]
    for method, _described in analysis.hindsight_methods:
        lines.append("  " + _("Every hand seen: {how}.").format(how=method_text(method, seats)))
    if hints:
        lines.append(_("Hints were on at this table (every seat could ask the expert)."))
    for s in analysis.summaries():
        lines.append("")
        lines.append(
            _("{name} (seat {seat}): {summary}").format(
                name=names[s.seat], seat=s.seat, summary=summary_text(s)
            )
        )
        if not s.costliest:
            lines.append("  " + _("No decision lost points."))
            continue
        lines.append("  " + _("Costliest decisions:"))
        for i, d in enumerate(s.costliest, 1):
            lines.append(f"  {i}. {place_text(d)}: {decision_text(d)}.")
            lines.append(f"     {position_text(d, names)}.")
    stopped = [r for r in analysis.rounds if r.stopped]
    for r in stopped:
        lines.append(
            _("Round {round}: the replay stops where the audit found a fault.").format(
                round=r.number + 1
            )
        )
    return lines


# -- at the table ---------------------------------------------------------------------------------


def reason_text(reason: Reason) -> str:
    return _(REASONS[reason])


def hint_text(hint: Hint) -> str:
    """``Hint: K♥. Your partner holds the trick: give it points. (+24 on average; next
    best 8♥: +12)``."""
    head = _("Hint: {choice}.").format(choice=choice_text(hint.action))
    if hint.runner_up is None or hint.reason is Reason.ONLY:
        return f"{head} {reason_text(hint.reason)}"
    other, value = hint.runner_up
    figures = _("({value} on average; next best {other}: {other_value})").format(
        value=signed_text(hint.value), other=choice_text(other), other_value=signed_text(value)
    )
    return f"{head} {reason_text(hint.reason)} {figures}"


def coach_line(analysis: RoundAnalysis, seat: int) -> str:
    """After a round: the costliest decision of ``seat`` in it, by the expert's reckoning
    (then hindsight's), or that none lost anything."""
    mine = [d for d in analysis.decisions if d.seat == seat]

    def cost(d: Decision) -> tuple[float, float]:
        return (d.loss("informed") or 0.0, d.loss("hindsight") or 0.0)

    worst = max(mine, key=cost, default=None)
    if worst is None or max(cost(worst)) <= 0:
        return _("Coach: none of your decisions this round lost points.")
    if worst.phase is Phase.PLAY:
        where = _("trick {trick}").format(trick=worst.trick_number)
    else:
        where = _("the bidding")
    return _("Coach: your costliest decision this round, {where}: {decision}.").format(
        where=where, decision=decision_text(worst)
    )


class TableCoach:
    """The coach of one seat at a table: its hints and the line after each round, each
    worked out in a worker thread (a search takes a moment: the table goes on meanwhile,
    and the next deal never waits for a coach line), one at a time."""

    def __init__(self, spec: str = COACH_BOT, *, seed: int = 0) -> None:
        self.coach = make_coach(spec, seed=seed)
        self._lock = trio.Lock()

    async def hint(self, observation: Observation) -> str:
        """The hint for ``observation``, in words."""
        async with self._lock:
            hint = await trio.to_thread.run_sync(
                self.coach.hint, observation, abandon_on_cancel=True
            )
        if hint is None:
            return _("No hint here: the expert does not value these choices.")
        return hint_text(hint)

    async def round_line(
        self, record: RoundRecord, seat: int, deck: Sequence[Card] | None = None
    ) -> str:
        """:func:`coach_line` of ``seat`` in the round just played: ``record`` with its whole
        ``deck`` (by default the record's own, whole in a local game; an audited round's
        :attr:`~belote_p2p.protocol.events.RoundAudited.deck` at a table)."""
        run = partial(self.coach.analyse_round, record, deck, {seat})
        async with self._lock:
            analysis = await trio.to_thread.run_sync(run, abandon_on_cancel=True)
        return coach_line(analysis, seat)
