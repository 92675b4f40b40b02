"""The bodies of a table's envelopes, and the unsigned sync request.

Every body is a map with a ``type`` (``protocol/PROTOCOL.md`` §6.2 is the reference):

* ``table``: ``{digest, proposal}``, the sender's signature of the table definition, with
  the host's signature of the same definition (its proposal);
* ``deck``: ``{round, msg}``, a deck protocol message (:mod:`belote_p2p.protocol.deck`);
* ``bid``: ``{round, bid, state}``, a bid in text form (``"pass"``, ``"90 H"``...);
* ``play``: ``{round, deck, claim, state}``, the deck protocol's play message (the card's
  position and the player's decryption share) and the player's claim (announcements with its
  first card, belote with the first of the trump king and queen);
* ``done``: ``{scores}``, sent once after the last round's audit;
* ``bye``: ``{}``, sent once a peer holds the four ``done``: a peer may close its
  connections when it holds the four ``bye`` (everyone has everything);
* ``abandon``: ``{seat}``, the sender declares that ``seat`` left the game: a seat may resign
  itself, or the three others sign that it stayed silent past its grace period;
* ``fault``: ``{seat, evidence}``, the envelopes, signed by the accused, that prove a fault;
* ``chat``: ``{text}``, a line of chat to the table (1 to :data:`MAX_CHAT_CHARS` characters);
  it never changes the game or the state digest.

One builder per body. The readers take one field each and check its shape only: what a
field means (the turn, the state digest, the round) is for the table session to check, in
its own order, since that order decides which fault a wrong envelope is blamed for.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from belote_p2p.game.announcements import Announcement, announcement_from_cards
from belote_p2p.game.cards import Card
from belote_p2p.game.engine import Bid, Claim

from .deck import DeckMessage, PlayMessage, message_from_wire
from .wire import SEATS, MalformedMessage, decode, encode

Body = dict[str, Any]

SYNC_TYPE = "sync"
MAX_CHAT_CHARS = 200
"""Characters in one chat line (its envelope stays under the ``chat`` size cap)."""
MAX_WANT = 64
"""Hashes a sync request may ask for."""


# -- builders ----------------------------------------------------------------------------


def table_body(digest: bytes, proposal: bytes) -> Body:
    return {"type": "table", "digest": digest, "proposal": proposal}


def deck_body(round_number: int, msg: DeckMessage) -> Body:
    return {"type": "deck", "round": round_number, "msg": msg.to_wire()}


def bid_body(round_number: int, bid: Bid, state: bytes) -> Body:
    return {"type": "bid", "round": round_number, "bid": str(bid), "state": state}


def play_body(round_number: int, play: PlayMessage, claim: Claim, state: bytes) -> Body:
    return {
        "type": "play",
        "round": round_number,
        "deck": play.to_wire(),
        "claim": claim_to_wire(claim),
        "state": state,
    }


def done_body(scores: Iterable[int]) -> Body:
    return {"type": "done", "scores": list(scores)}


def bye_body() -> Body:
    return {"type": "bye"}


def abandon_body(seat: int) -> Body:
    return {"type": "abandon", "seat": seat}


def fault_body(seat: int, evidence: Iterable[bytes]) -> Body:
    return {"type": "fault", "seat": seat, "evidence": list(evidence)}


def chat_body(text: str) -> Body:
    return {"type": "chat", "text": text}


def claim_to_wire(claim: Claim) -> dict[str, Any]:
    return {
        "belote": claim.belote,
        "announcements": [[str(c) for c in a.card_list] for a in claim.announcements],
    }


# -- readers -----------------------------------------------------------------------------


def table_digest(body: Mapping[str, Any]) -> bytes:
    """What a ``table`` body signs (the table definition's digest, if honest);
    ``ValueError`` if it is no digest."""
    digest = body.get("digest")
    if type(digest) is not bytes or len(digest) != 32:
        raise ValueError("a table digest is 32 bytes")
    return digest


def table_proposal(body: Mapping[str, Any]) -> object:
    """The host's signature of the definition a ``table`` body signs."""
    return body.get("proposal")


def round_of(body: Mapping[str, Any]) -> int | None:
    """The round a ``deck``, ``bid`` or ``play`` body is for; ``None`` if it names none."""
    number = body.get("round")
    return number if type(number) is int else None


def state_of(body: Mapping[str, Any]) -> object:
    """The state digest a ``bid`` or ``play`` body was signed on."""
    return body.get("state")


def deck_message(body: Mapping[str, Any], sender: int) -> DeckMessage:
    """The deck protocol message of a ``deck`` body; a ``DeckError`` blames ``sender``."""
    return message_from_wire(body.get("msg"), sender=sender)


def parse_bid(body: Mapping[str, Any]) -> Bid:
    """The bid of a ``bid`` body; ``ValueError`` if malformed."""
    text = body.get("bid")
    if not isinstance(text, str):
        raise ValueError("a bid is text")
    return Bid.parse(text)


def play_message(body: Mapping[str, Any], sender: int) -> PlayMessage:
    """The deck protocol's play message of a ``play`` body (a ``DeckError`` if malformed)."""
    return PlayMessage.from_wire(body.get("deck"), sender=sender)


def play_claim(body: Mapping[str, Any], trump: int) -> Claim:
    """The claim of a ``play`` body; ``ValueError`` if malformed."""
    return claim_from_wire(body.get("claim"), trump)


def claim_from_wire(data: object, trump: int) -> Claim:
    """Parse a claim; ``ValueError`` if malformed."""
    if not isinstance(data, dict) or set(data) != {"belote", "announcements"}:
        raise ValueError("a claim is a map of belote and announcements")
    belote, anns = data["belote"], data["announcements"]
    if type(belote) is not bool or not isinstance(anns, list) or len(anns) > 4:
        raise ValueError("bad claim fields")
    out: list[Announcement] = []
    for cards in anns:
        if not isinstance(cards, list) or not all(isinstance(c, str) for c in cards):
            raise ValueError("an announcement is a list of cards")
        out.append(announcement_from_cards([Card.parse(c) for c in cards], trump))
    return Claim(tuple(out), belote)


def done_scores(body: Mapping[str, Any]) -> object:
    """The final scores a ``done`` body signs, as sent."""
    return body.get("scores")


def abandoned_seat(body: Mapping[str, Any]) -> int | None:
    """The seat an ``abandon`` body declares gone; ``None`` if it names no seat (the
    session also refuses a seat beyond its table's)."""
    seat = body.get("seat")
    return seat if type(seat) is int and 0 <= seat < SEATS else None


def chat_text(body: Mapping[str, Any]) -> str:
    """The line of a ``chat`` body; ``ValueError`` unless it is 1 to
    :data:`MAX_CHAT_CHARS` characters of text."""
    text = body.get("text")
    if not isinstance(text, str) or not 0 < len(text) <= MAX_CHAT_CHARS:
        raise ValueError(f"a chat line is 1 to {MAX_CHAT_CHARS} characters of text")
    return text


def fault_evidence(body: Mapping[str, Any]) -> list[bytes]:
    """The first four pieces of evidence of a ``fault`` body that are bytes at all."""
    evidence = body.get("evidence")
    if not isinstance(evidence, list):
        return []
    return [data for data in evidence[:4] if type(data) is bytes]


# -- the sync request --------------------------------------------------------------------


def encode_sync(have: list[int], want: list[bytes]) -> bytes:
    """A sync request: the next seq expected from each seat, and hashes to send (the first
    :data:`MAX_WANT` of ``want``)."""
    return encode({"type": SYNC_TYPE, "have": have, "want": want[:MAX_WANT]})


def parse_sync(data: bytes) -> tuple[list[int], list[bytes]] | None:
    """``(have, want)`` if ``data`` is a sync request, ``None`` if it looks like an envelope.

    A sync request is the canonical map ``{"type": "sync", "have": [an int per seat], "want":
    [hashes]}``, unsigned: it only asks for signed envelopes. Raises
    :class:`~belote_p2p.protocol.wire.MalformedMessage` for a malformed one.
    """
    if not data or data[0] != 0x83:  # a map of three entries; an envelope has seven
        return None
    value = decode(data)
    if not isinstance(value, dict) or value.get("type") != SYNC_TYPE:
        return None
    have, want = value.get("have"), value.get("want")
    if (
        set(value) != {"type", "have", "want"}
        or not isinstance(have, list)
        or not 2 <= len(have) <= 4
        or any(type(n) is not int or n < 0 for n in have)
        or not isinstance(want, list)
        or len(want) > MAX_WANT
        or any(type(h) is not bytes or len(h) != 32 for h in want)
    ):
        raise MalformedMessage("malformed sync request", evidence=(bytes(data),))
    return have, want
