"""The replay page: a finished game stepped through card by card, every hand open, each
decision marked with what it cost and the best choice shown where it differed.

:func:`replay_page` makes one HTML page that stands alone (``analyse GAME --html FILE``;
the web lobby serves the same page for a game of its list): its style, its script and the
game are in it, and it fetches nothing. Every word on it is made here, in the reader's
language, and carried in the page's data (a ``<script type="application/json">`` block the
browser never runs); the script only draws the steps and moves between them (buttons, the
arrow keys, a click on a decision of the round's strip). It works at a phone's width: the
four hands go one under the other there.

A step is the table just before one action of a round (the hands as they were, the trick on
the table or the bids so far, the score), with that action and its valuation; the last step
of a round shows the round's end. The page's inline script and style are constants
(:data:`SCRIPT`, :data:`STYLE`), so that a server can allow exactly them by their hash
(:func:`content_security_policy`).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from collections.abc import Sequence
from importlib import resources
from typing import Any

from belote_p2p.game.cards import Card, cards_of
from belote_p2p.game.engine import Action, Bid, Phase, RoundRecord, State, deal_owners
from belote_p2p.game.rules import Variant
from belote_p2p.i18n import _, using
from belote_p2p.players.analysis import Decision, GameAnalysis
from belote_p2p.protocol.verify import Verdict

from ..coach import choice_text, decision_text, method_text, place_text, summary_text
from ..display import dashed, format_round, seat_names
from ..profile import players_text
from ..wording import bid_text, card_text, contract_text, side_names, trump_text, variant_name

LOSS_LEVELS = (0.5, 10.0, 40.0)
"""Losses (round points, as the player knew it) from which a decision is marked a slip, a
mistake and a blunder."""


def _level(loss: float | None) -> int:
    """0 (nothing lost, or not valued) to 3 (a blunder)."""
    if loss is None:
        return 0
    return sum(1 for x in LOSS_LEVELS if loss >= x)


def _positions(seats: int) -> tuple[str, ...]:
    """Where each seat sits on the page: seat 0 at the bottom, the next to play on its
    right, as the terminal table draws it."""
    return {4: ("south", "east", "north", "west"), 3: ("south", "east", "west"),
            2: ("south", "north")}[seats]  # fmt: skip


def _card(c: Card) -> list[Any]:
    """A card as the page draws it: its text in the reader's letters, and whether red."""
    return [card_text(c), c >> 3 in (1, 2)]


def _face_down(state: State, seat: int) -> list[int]:
    """Two-handed: ``seat``'s face-down cards not yet turned up (nobody saw them in play)."""
    if state.rules.variant is not Variant.TWO_HANDED or not state.deck:
        return []
    owners = deal_owners(state.rules, state.dealer)
    deck = zip(state.deck, owners, strict=True)
    mine = sum(1 << c for c, o in deck if o == seat and c is not None)
    hidden = mine & ~state.hands[seat] & ~state.played
    return [int(c) for c in cards_of(hidden)]


def _score_text(state: State, names: Sequence[str]) -> str:
    sides = side_names(names)
    points = " · ".join(f"{side} {p}" for side, p in zip(sides, state.team_points, strict=True))
    return _("Card points this round: {points} · game {game}").format(
        points=points, game=dashed(state.scores)
    )


def _said(seat: int, action: Action, names: Sequence[str]) -> str:
    if isinstance(action, Bid):
        return _("{name}: {bid}").format(name=names[seat], bid=bid_text(action))
    return _("{name} plays {card}").format(name=names[seat], card=card_text(action))


def _contract(state: State, names: Sequence[str]) -> str:
    if state.trump < 0:
        if state.turned is not None:
            return _("Bidding · turned {card}").format(card=card_text(state.turned))
        return _("Bidding")
    if state.taker < 0:
        return _("Trump {trump}").format(trump=trump_text(state.trump))
    if state.contract:
        return _("{name} bids {contract} {trump}").format(
            name=names[state.taker],
            contract=contract_text(state.contract),
            trump=trump_text(state.trump),
        )
    return _("{name} takes, trump {trump}").format(
        name=names[state.taker], trump=trump_text(state.trump)
    )


def _decision(d: Decision | None) -> dict[str, Any] | None:
    if d is None:
        return None
    informed, seen = d.informed, d.hindsight
    loss = informed.loss if informed is not None else None
    best = informed.best if informed is not None and loss else None
    seen_best = seen.best if seen is not None and seen.loss else None
    return {
        "text": decision_text(d),
        "place": place_text(d),
        "loss": None if loss is None else round(loss, 1),
        "level": _level(loss),
        "hindsight": None if seen is None or seen.loss is None else round(seen.loss, 1),
        "best": int(best) if isinstance(best, int) else None,
        "best_text": choice_text(best) if best is not None else None,
        "seen_best": int(seen_best) if isinstance(seen_best, int) else None,
    }


def _round_steps(
    record: RoundRecord, deck: Sequence[Card], names: Sequence[str], found: dict[int, Decision]
) -> list[dict[str, Any]]:
    state = record.start.deal(tuple(deck))
    seats = state.seats
    steps: list[dict[str, Any]] = []

    def table(step: dict[str, Any]) -> dict[str, Any]:
        trick = [[(state.leader + i) % seats, int(c)] for i, c in enumerate(state.trick)]
        bidding = state.phase is not Phase.PLAY
        bids = [[seat, bid_text(b)] for seat, b in state.bids] if bidding else []
        step.update(
            hands=[[int(c) for c in state.hand(s)] for s in range(seats)],
            down=[_face_down(state, s) for s in range(seats)],
            trick=trick,
            bids=bids,
            turned=int(state.turned) if state.turned is not None and state.trump < 0 else None,
            contract=_contract(state, names),
            score=_score_text(state, names),
            tricks=len(state.tricks),
        )
        return step

    for index, (action, _claim) in enumerate(record.actions):
        legal = state.legal_actions()
        if action not in legal:
            break  # the audit's fault: the replay stops there
        seat = state.to_act
        steps.append(
            table(
                {
                    "seat": seat,
                    "action": int(action) if not isinstance(action, Bid) else None,
                    "said": _said(seat, action, names),
                    "decision": _decision(found.get(index)),
                }
            )
        )
        state = state.apply(action)
    end = format_round(record, names).split("\n")[-1].strip()
    steps.append(table({"seat": None, "action": None, "said": end, "decision": None, "end": True}))
    return steps


def page_data(verdict: Verdict, analysis: GameAnalysis) -> dict[str, Any]:
    """Everything the page shows, its words in the language in use."""
    definition = verdict.definition
    rules = definition.rules
    names = seat_names(definition)
    by_round: dict[int, dict[int, Decision]] = {}
    for d in analysis.decisions:
        by_round.setdefault(d.round, {})[d.index] = d
    rounds = []
    for audited in verdict.rounds:
        record = audited.record
        if not audited.deck:
            continue
        head = _("Round {number}, dealer {dealer}").format(
            number=record.number + 1, dealer=names[record.dealer]
        )
        steps = _round_steps(record, audited.deck, names, by_round.get(record.number, {}))
        rounds.append({"title": head, "steps": steps})
    summaries = [
        {"seat": s.seat, "text": f"{names[s.seat]}: {summary_text(s)}"}
        for s in analysis.summaries()
    ]
    methods = [
        _("Every hand seen: {how}.").format(how=method_text(m, rules.seats))
        for m, _d in analysis.hindsight_methods
    ]
    return {
        "title": _("Replay: {variant} to {target}, {players}").format(
            variant=variant_name(rules.name), target=rules.target, players=players_text(names)
        ),
        "names": list(names),
        "positions": list(_positions(rules.seats)),
        "cards": [_card(Card(c)) for c in range(32)],
        "rounds": rounds,
        "summaries": summaries,
        "methods": methods,
        "hints": definition.hints,
        "words": {
            "previous": _("Previous"),
            "next": _("Next"),
            "previous_trick": _("Previous trick"),
            "next_trick": _("Next trick"),
            "previous_round": _("Previous round"),
            "next_round": _("Next round"),
            "step": _("Step {n} of {of}"),
            "face_down": _("face down"),
            "turned": _("turned"),
            "keys": _("Keys: ← → a card, ↑ ↓ a trick, Page Up and Page Down a round."),
            "views": _(
                "Losses are counted as the player knew it (the expert's reckoning from that "
                "seat's view); with every hand seen in brackets."
            ),
            "hints_on": _("Hints were on at this table."),
            "legend": _("Marks: green the best card, red the card played where it cost points."),
        },
    }


def _static(name: str) -> str:
    return resources.files(__package__).joinpath("static", name).read_text("utf-8")


STYLE = _static("replay.css")
"""The page's style (``static/replay.css``, allowed by its hash)."""
SCRIPT = _static("replay.js")
"""The page's script (``static/replay.js``, allowed by its hash)."""


def _hash(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def content_security_policy() -> str:
    """What a server sends with the page: nothing from elsewhere, and only its own inline
    script and style."""
    return (
        f"default-src 'none'; script-src '{_hash(SCRIPT)}'; style-src '{_hash(STYLE)}'; "
        "img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )


def replay_page(verdict: Verdict, analysis: GameAnalysis, language: str) -> str:
    """The replay page of ``verdict``'s game in ``language`` (see the module)."""
    with using(language) as lang:
        data = page_data(verdict, analysis)
        seats = "".join(
            f'<section class="seat" id="seat{i}"><div class="name"></div>'
            '<div class="hand"></div></section>'
            for i in range(verdict.definition.rules.seats)
        )
        body = (
            "<!DOCTYPE html>\n"
            f'<html lang="{html.escape(lang)}"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{html.escape(data['title'])}</title>"
            f"<style>{STYLE}</style></head><body>"
            '<header><h1 id="title"></h1><p class="small" id="views"></p>'
            '<div id="summaries"></div></header><main>'
            '<nav><button id="prevround"></button><button id="prevtrick"></button>'
            '<button id="prev"></button><button id="next"></button>'
            '<button id="nexttrick"></button><button id="nextround"></button>'
            '<span id="where"></span></nav><div id="strip"></div>'
            '<p class="small"><span id="contract"></span> · <span id="score"></span></p>'
            f'<div id="table" class="seats-{len(data["positions"])}">{seats}'
            '<div id="middle"><div id="bids"></div>'
            '<div id="trick"></div></div></div>'
            '<p id="said"></p><p id="verdict"></p></main>'
            '<footer class="small"><p id="legend"></p><p id="keys"></p></footer>'
            '<script type="application/json" id="replay-data">'
            + json.dumps(data, ensure_ascii=False).replace("<", "\\u003c")
            + f"</script><script>{SCRIPT}</script></body></html>\n"
        )
    return body
