"""Everything a bot plugin needs, in one module: import from here and nothing else
(``hookimpl`` and ``BotInfo`` included: the names elsewhere in the package may move).

A bot is an object with ``decide(observation, rng) -> action`` returning one of
``observation.legal``; it may also define ``new_game(rules, seat)`` and
``new_round(observation)``, called when a game and each round begin (the same names a
live seat's player answers). A plugin announces its bots with the ``belote_bots`` hook and
an entry point in the group ``belote_p2p.bots``::

    import random

    from belote_p2p.bot import PASS, Action, BotInfo, Observation, hookimpl

    class Passer:
        def decide(self, observation: Observation, rng: random.Random) -> Action:
            return PASS if PASS in observation.legal else rng.choice(observation.legal)

    @hookimpl
    def belote_bots() -> list[BotInfo]:
        return [BotInfo("passer", Passer, "1.0", "Passes whenever it may.")]

The plugin's package declares the entry point (``pyproject.toml``:
``[project.entry-points."belote_p2p.bots"] mybots = "mypackage"``);
``plugins/examples/belote-bot-example`` is one to copy. A bot in another language is a
program speaking ``protocol/BOTS.md`` on its standard input and output, seated by the
built-in ``exec`` bot (``exec:cmd=./mybot``), or announced by a plugin of its own with
``BotInfo("mybot", functools.partial(ProgramBot, cmd="mybot-engine"))``; its words for
cards and actions are :func:`action_word` and :func:`parse_action_word`'s, its view
:func:`observation_json`'s.

A bot is measured with ``belote-p2p arena`` (two bots on duplicate boards: each deal
played twice, the bots swapping seats; points per board is the first bot's points minus
the other's over both tables, with a 95% interval of the mean) and ``belote-p2p
tournament`` (every pair on the same boards, Bradley–Terry ratings in Elo with bootstrap
intervals).

Cards are ints ``suit * 8 + rank`` (:class:`Card`), hands and sets of cards are 32-bit
masks (:data:`CardMask`), a trump mode is a suit or :data:`NO_TRUMP` / :data:`ALL_TRUMP`
(:data:`TrumpMode`); the per-trump tables (:data:`POINTS`, :data:`STRENGTH`, :data:`ABOVE`,
:data:`TRUMP_MASK`) make card play arithmetic cheap.

For search, two tools beside the checked engine (:class:`State`):

* :class:`FastState`, the fast path: the card play of a round as hand masks and a few
  ints, unchecked, with ``push``/``pop`` (undo), ``play`` and ``copy``, and the greedy
  playout policy (``greedy_card``, ``play_greedy``). Build it from your observation and a
  deal of the unseen cards you sampled (with two or three seats it is a
  :class:`FewFastState`, scored per seat; two-handed, pass the face-down cards you sampled
  under the face-up ones, ``under``)::

      f = FastState.from_observation(observation, hands)  # hands: 4 masks of unplayed cards
      for card in cards_of(f.legal_mask()):
          f.push(card)
          ...                                             # search, play out, evaluate
          f.pop()
      f.copy().play_random(rng)                           # a random playout, then f.score()

* :class:`Solver` (and :func:`solve`, :func:`solve_moves`), four seats only (``ValueError``
  otherwise), the double-dummy solver: the
  exact value of the rest of the round with every hand known, as team 0's card points
  minus team 1's (capot 250, générale 500); ``Solver(f, tricks=2)`` bounds the search to two
  tricks and a greedy playout. ``f.score_for(f.points[0] - f.points[1] + value)`` turns a
  value into the round score.
"""

from __future__ import annotations

from belote_p2p.game.announcements import Announcement, AnnouncementKind, find_announcements
from belote_p2p.game.cards import (
    CARDS,
    FULL_DECK,
    RANK_MASKS,
    SUIT_MASKS,
    Card,
    CardMask,
    Rank,
    Suit,
    card,
    cards_of,
    format_cards,
    mask_of,
)
from belote_p2p.game.engine import (
    BIDS,
    CHOOSE,
    COINCHE,
    PASS,
    SURCOINCHE,
    TAKE,
    Action,
    Bid,
    BidKind,
    Claim,
    IllegalActionError,
    Phase,
    State,
    Trick,
    deal_owners,
    other_belote_card,
    pile_positions,
    public_positions,
    under_position,
)
from belote_p2p.game.fastplay import (
    FastState,
    FewFastState,
    equivalent_groups,
    few_round_score,
    random_round,
    round_score,
)
from belote_p2p.game.observation import Observation
from belote_p2p.game.rules import RuleSet, SeatNumber, Variant, rule_set
from belote_p2p.game.scoring import (
    CAPOT_POINTS,
    COINCHE_FAILED_BASE,
    GENERALE_POINTS,
    Outcome,
    RoundScore,
)
from belote_p2p.game.solver import Solver, solve, solve_moves
from belote_p2p.game.tables import (
    ABOVE,
    ALL_TRUMP,
    NO_TRUMP,
    POINTS,
    STRENGTH,
    TRUMP_MASK,
    TrumpMode,
    winning_index,
)
from belote_p2p.players.hookspecs import Bot, BotInfo, hookimpl
from belote_p2p.players.program import ProgramBot, action_word, observation_json, parse_action_word

__all__ = [
    "ABOVE",
    "ALL_TRUMP",
    "BIDS",
    "CAPOT_POINTS",
    "CARDS",
    "CHOOSE",
    "COINCHE",
    "COINCHE_FAILED_BASE",
    "FULL_DECK",
    "GENERALE_POINTS",
    "NO_TRUMP",
    "PASS",
    "POINTS",
    "RANK_MASKS",
    "STRENGTH",
    "SUIT_MASKS",
    "SURCOINCHE",
    "TAKE",
    "TRUMP_MASK",
    "Action",
    "Announcement",
    "AnnouncementKind",
    "Bid",
    "BidKind",
    "Bot",
    "BotInfo",
    "Card",
    "CardMask",
    "Claim",
    "FastState",
    "FewFastState",
    "IllegalActionError",
    "Observation",
    "Outcome",
    "Phase",
    "ProgramBot",
    "Rank",
    "RoundScore",
    "RuleSet",
    "SeatNumber",
    "Solver",
    "State",
    "Suit",
    "Trick",
    "TrumpMode",
    "Variant",
    "action_word",
    "card",
    "cards_of",
    "deal_owners",
    "equivalent_groups",
    "few_round_score",
    "find_announcements",
    "format_cards",
    "hookimpl",
    "mask_of",
    "observation_json",
    "other_belote_card",
    "parse_action_word",
    "pile_positions",
    "public_positions",
    "random_round",
    "round_score",
    "rule_set",
    "solve",
    "solve_moves",
    "under_position",
    "winning_index",
]
