"""Strangers at the table: what ``host --public``, ``tables --relay`` and ``join --any`` do
with a relay's public directory (``PROTOCOL.md`` §12).

The messages and their checks are sans-io (:mod:`belote_p2p.protocol.directory`), the trio
client is :mod:`belote_p2p.net.directory`; this module is the person's side of them: the
host's advertisement built from its lobby, the list a stranger reads, the choice of a table
(a fitting one, nobody blocked at it, not one that failed us already), and the ready check
answered for a bot or asked of a person.

Nothing a directory says is taken on its word: every ad's signature is checked where it is
read (:func:`~belote_p2p.protocol.directory.parse_tables`), the query's filters are applied
again here, and the lobby a stranger reaches must be the advertised key's own table
(:func:`check_advertised`) before the stranger plays a card. A stranger's level is that
stranger's claim; what we know ourselves is the games our own verified records hold with
that key (:func:`games_with`).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import sys
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any

import trio

from belote_p2p import i18n
from belote_p2p.i18n import _, ngettext, pgettext
from belote_p2p.net.address import parse_address
from belote_p2p.net.directory import DEFAULT_TTL, AdvertiserState, MakeAd, query_directory
from belote_p2p.net.invite import Invitation
from belote_p2p.net.lobby import Lobby, LobbyAnswer, LobbyError, ReadyCheck
from belote_p2p.protocol.directory import (
    MAX_LANGS,
    MAX_LEVEL,
    AdPlayer,
    Advertisement,
    DirectoryError,
    Listing,
    Query,
    SignedAd,
)
from belote_p2p.protocol.identity import Identity, fingerprint
from belote_p2p.protocol.relay import DEFAULT_RELAY_PORT

from .blocklist import BlockList
from .home import Home
from .profile import ProfileError, games_together, level_for_xp, open_db, total_xp
from .wording import variant_name

logger = logging.getLogger(__name__)

WAIT_RETRY = 5.0
"""Seconds ``join --any`` waits between two queries while no table fits."""
SKIP_FAILED = 4
"""Queries a table that failed us (unreachable, full, refusing) is passed by for."""


def directory_address(text: str) -> tuple[str, int]:
    """``HOST[:PORT]`` of a relay with a directory (port 7779); ``ValueError`` if not one."""
    return parse_address(text, DEFAULT_RELAY_PORT)


# -- what we say of ourselves, what we know of others -------------------------------------------


def own_claims(home: Home, key: bytes) -> tuple[str | None, int | None]:
    """What we tell a host of ourselves: the language we read and our level (from our own
    records; None where they cannot be read)."""
    lang = i18n.current().split("_")[0].lower()
    level = None
    if home.profile_db.exists():
        try:
            with open_db(home.profile_db) as conn:
                level = min(level_for_xp(total_xp(conn, fingerprint(key))), MAX_LEVEL)
        except (sqlite3.Error, ProfileError, OSError):
            level = None
    return (lang if 2 <= len(lang) <= 3 and lang.isalpha() else None), level


def games_with(home: Home, me: bytes, keys: Iterable[bytes]) -> dict[bytes, int]:
    """For each of ``keys``, the games our verified records hold with it at our table (0
    for a stranger; 0 too where the records cannot be read)."""
    keys = list(keys)
    known = dict.fromkeys(keys, 0)
    if not keys or not home.profile_db.exists():
        return known
    try:
        with open_db(home.profile_db) as conn:
            counts = games_together(conn, fingerprint(me), [fingerprint(k) for k in keys])
    except (sqlite3.Error, ProfileError, OSError):
        return known
    return {key: counts.get(fingerprint(key), 0) for key in keys}


def claim_text(level: int | None, games: int) -> str:
    """A stranger's claimed level beside what our records know of its key, in words."""
    together = ngettext("{n} game with you", "{n} games with you", games).format(
        n=i18n.format_number(games)
    )
    if level is None:
        return _("no level given; {together}").format(together=together)
    return _("level {level} (their claim); {together}").format(level=level, together=together)


# -- the list -----------------------------------------------------------------------------------


def fitting(
    listing: Listing,
    query: Query,
    blocked: BlockList,
    own_key: bytes,
    skip: Iterable[tuple[bytes, bytes]] = (),
) -> list[Advertisement]:
    """The advertised tables we may sit at: fitting ``query`` (checked again: the directory
    may lie), none of whose keys we block, not our own, not one of ``skip``, in the
    directory's order."""
    passed = set(skip)
    return [
        signed.ad
        for signed in listing.ads
        if query.fits(signed.ad)
        and own_key not in signed.ad.keys
        and not blocked.blocked_among(signed.ad.keys)
        and signed.ad.listing not in passed
    ]


def ad_json(signed: SignedAd, games: dict[bytes, int]) -> dict[str, Any]:
    """One listed table as ``tables --json`` prints it (English keys, hex keys; levels are
    the players' claims, ``games_with_you`` what our records know)."""
    ad = signed.ad
    return {
        "host": ad.name,
        "host_key": ad.host_key.hex(),
        "fingerprint": fingerprint(ad.host_key),
        "table": ad.table_id.hex(),
        "variant": ad.variant,
        "target": ad.target,
        "seats": ad.seats,
        "free": ad.free,
        "langs": list(ad.langs),
        "claimed_level": ad.level,
        "games_with_you": games.get(ad.host_key, 0),
        "players": [
            {
                "name": p.name,
                "fingerprint": fingerprint(p.key),
                "claimed_level": p.level,
                "games_with_you": games.get(p.key, 0),
            }
            for p in ad.players
        ],
        "addresses": list(ad.addresses),
        "relay": ad.relay,
        "blocked": False,
    }


def format_public(ads: Sequence[Advertisement], games: dict[bytes, int]) -> str:
    """A numbered table of public tables, one line each, then a line saying that levels
    are claims."""
    rows = [
        (
            "#",
            pgettext("column", "host"),
            pgettext("column", "key"),
            pgettext("column", "variant"),
            pgettext("column", "target"),
            pgettext("column", "free"),
            pgettext("column", "languages"),
            pgettext("column", "level (claimed)"),
            pgettext("column", "games with you"),
        )
    ]
    for i, ad in enumerate(ads, 1):
        rows.append(
            (
                str(i),
                ad.name,
                fingerprint(ad.host_key),
                variant_name(ad.variant),
                str(ad.target),
                f"{ad.free}/{ad.seats}",
                " ".join(ad.langs) or "-",
                "-" if ad.level is None else str(ad.level),
                str(games.get(ad.host_key, 0)),
            )
        )
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    table = "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )
    return (
        table
        + "\n"
        + _(
            "Levels are what each player says of itself; the games with you come from your own "
            "verified records."
        )
    )


async def list_public(
    address: str, query: Query, home: Home, as_json: bool, *, out: Any = None
) -> int:
    """``tables --relay``: print the public tables that fit ``query``; the exit status (1:
    none, 2: the directory cannot be read)."""
    out = sys.stdout if out is None else out
    try:
        where = directory_address(address)
        listing = await query_directory(where, query)
    except (ValueError, DirectoryError) as exc:
        print(
            "belote-p2p tables: "
            + _("the directory at {address}: {error}").format(address=address, error=exc),
            file=sys.stderr,
        )
        return 2
    identity = home.identity()
    blocked = BlockList.of(home)
    shown = [s for s in listing.ads if query.fits(s.ad)]
    keys = {k for s in shown for k in s.ad.keys}
    games = games_with(home, identity.public_key_bytes, keys)
    if as_json:
        entries = []
        for signed in shown:
            entry = ad_json(signed, games)
            entry["blocked"] = bool(blocked.blocked_among(signed.ad.keys))
            entries.append(entry)
        print(
            json.dumps({"tables": entries, "more": listing.more, "refused": listing.refused}),
            file=out,
        )
        return 0 if entries else 1
    if listing.refused:
        print(
            ngettext(
                "The directory sent {n} entry that is not a signed table: left out.",
                "The directory sent {n} entries that are not signed tables: left out.",
                listing.refused,
            ).format(n=listing.refused),
            file=sys.stderr,
        )
    ads = [s.ad for s in shown if not blocked.blocked_among(s.ad.keys)]
    if not ads:
        print(_("No public table fits at {address}.").format(address=address), file=out)
        return 1
    print(format_public(ads, games), file=out)
    if listing.more:
        print(
            _("More tables fit than the directory sent: narrow with --variant or --lang."), file=out
        )
    return 0


# -- the quick match ----------------------------------------------------------------------------


def check_advertised(answer: LobbyAnswer, ad: Advertisement, where: str) -> None:
    """The table ``answer`` is the advertised one: its id, proposed by the ad's host key
    (:class:`LobbyError` otherwise: whoever answered at the ad's address is not that host,
    or the directory paired a real host's key with someone else's address)."""
    definition = answer.definition
    if definition.host_key != ad.host_key:
        raise LobbyError(
            _(
                "the host at {address} is not the one of the advertisement: its key is {key}, "
                "the advertisement's is {named}. Someone may be posing as the host; not joining."
            ).format(
                address=where,
                key=fingerprint(definition.host_key),
                named=fingerprint(ad.host_key),
            )
        )
    if definition.table_id != ad.table_id:
        raise LobbyError(
            _(
                "the host at {address} opened table {table}, not the advertised {named}; "
                "not joining."
            ).format(address=where, table=definition.table_id.hex(), named=ad.table_id.hex())
        )


class Finder:
    """``join --any``'s search: query the directory until a table fits, passing by the
    tables that failed us for a while (:data:`SKIP_FAILED` queries)."""

    def __init__(
        self,
        address: tuple[str, int],
        query: Query,
        home: Home,
        own_key: bytes,
        *,
        say: Callable[[str], None],
        retry: float = WAIT_RETRY,
    ) -> None:
        self.address = address
        self.query = query
        self.home = home
        self.own_key = own_key
        self.say = say
        self.retry = retry
        self._failed: dict[tuple[bytes, bytes], int] = {}
        self._waiting_said = False

    def failed(self, ad: Advertisement) -> None:
        """``ad``'s table failed us: pass it by for a while."""
        self._failed[ad.listing] = SKIP_FAILED

    async def candidates(self) -> list[Advertisement]:
        """The tables that fit now (empty when none does, or the directory cannot be
        read: said once, in words)."""
        for table in list(self._failed):
            self._failed[table] -= 1
            if self._failed[table] <= 0:
                del self._failed[table]
        try:
            listing = await query_directory(self.address, self.query)
        except DirectoryError as exc:
            self.say(_("The directory cannot be read now: {error}").format(error=exc))
            return []
        return fitting(listing, self.query, BlockList.of(self.home), self.own_key, self._failed)

    async def wait(self, first: bool) -> None:
        """No table fits: say so (once) and wait before the next query."""
        if first and not self._waiting_said:
            self._waiting_said = True
            if self.query.variant is not None:
                self.say(
                    _(
                        "No public table of {variant} has a free seat yet: waiting for one "
                        "(Ctrl-C to stop)."
                    ).format(variant=variant_name(self.query.variant))
                )
            else:
                self.say(
                    _("No public table has a free seat yet: waiting for one (Ctrl-C to stop).")
                )
        await trio.sleep(self.retry)


def ready_answer(
    home: Home,
    own_key: bytes,
    ask: Callable[[str], str] | None,
    say: Callable[[str], None],
) -> Callable[[ReadyCheck], Awaitable[bool]]:
    """Our answer to a host's ready check: not ready if a key we block is seated; else a
    person (``ask``) says, having read the seats with their claims and what our records
    know; a bot (``ask`` None) is ready."""

    async def answer(check: ReadyCheck) -> bool:
        keys = [seat.key for seat in check.seats]
        blocked = BlockList.of(home).blocked_among(keys)
        if blocked:
            say(
                _("Not ready: {fingerprint} is on your block list.").format(
                    fingerprint=fingerprint(blocked[0])
                )
            )
            return False
        if ask is None:
            return True
        games = games_with(home, own_key, keys)
        say(_("The table is full. Its seats:"))
        for number, seat in enumerate(check.seats):
            you = seat.key == own_key
            claims = _("you") if you else claim_text(seat.level, games.get(seat.key, 0))
            say(f"  {number} {seat.name} [{fingerprint(seat.key)}] {seat.lang or '-'}: {claims}")
        question = _("Ready to play (Enter or y; n to leave), {seconds} s to answer? ").format(
            seconds=check.seconds
        )
        try:
            reply = await trio.to_thread.run_sync(ask, question, abandon_on_cancel=True)
        except EOFError:
            return False
        return reply.strip().lower() in ("", "y", "yes", "o", "oui", "s", "si", "sí")

    return answer


# -- the host's side ----------------------------------------------------------------------------


def table_ad_maker(
    lobby: Lobby,
    identity: Identity,
    invitation: Invitation,
    free_seats: Callable[[], int],
    home: Home,
) -> MakeAd:
    """What a public host lists (:class:`~belote_p2p.net.directory.Advertiser`'s
    ``make_ad``): its lobby as it is now, over the relay's ``nonce``; None (withdraw) once
    ``free_seats()`` says no seat is left for strangers, or the ad cannot be made (logged)."""
    lang, level = own_claims(home, identity.public_key_bytes)
    rules = lobby.rules

    def make(nonce: bytes, seq: int) -> Advertisement | None:
        free = free_seats()
        if free <= 0:
            return None
        joined = lobby.joined
        spoken = [lang, *(r.lang for r in joined)]
        langs = tuple(dict.fromkeys(x for x in spoken if x is not None))[:MAX_LANGS]
        try:
            return Advertisement(
                host_key=identity.public_key_bytes,
                table_id=lobby.table_id,
                nonce=nonce,
                seq=seq,
                ttl=DEFAULT_TTL,
                name=lobby.host.name,
                variant=rules.name,
                target=rules.target,
                seats=rules.seats,
                free=free,
                players=tuple(AdPlayer(r.name, r.key, r.level) for r in joined),
                langs=langs,
                level=level,
                addresses=invitation.addresses,
                relay=invitation.relay,
            )
        except DirectoryError as exc:
            logger.warning("the table cannot be listed: %s", exc)
            return None

    return make


def advertising_line(state: AdvertiserState, directory: str) -> str:
    """What the host reads when its listing changes."""
    if state.listed:
        return _(
            "Listed in the public directory at {address}: strangers find the table with  "
            "belote-p2p join --any --relay {address}"
        ).format(address=directory)
    if state.problem is not None:
        return _("The table is not listed at {address} ({problem}); trying again.").format(
            address=directory, problem=state.problem
        )
    return _("The table is no longer listed at {address}.").format(address=directory)
