"""``belote-p2p join``: take a seat of a table, found by its invitation code, its address,
or among the tables heard on the local network.

An invitation code (:mod:`belote_p2p.net.invite`) names the host's key as well as its
addresses: the joiner refuses a table that key did not propose, so that nobody can pose as
the host. ``--seat`` and ``--partner`` ask the host for a seat; ``--no-listen`` makes the
other peers reach this one through the relay (the host's port, or the one it names).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace

import trio

from belote_p2p.app.argtypes import positive_seconds
from belote_p2p.game.rules import RULE_SETS
from belote_p2p.i18n import _, format_number
from belote_p2p.net.address import (
    format_address,
    listener_port,
    open_listeners,
    parse_address,
)
from belote_p2p.net.discovery import (
    DEFAULT_LISTEN,
    TableAd,
    discover_all,
)
from belote_p2p.net.invite import Invitation, InvitationError, is_invitation
from belote_p2p.net.lobby import (
    DEFAULT_PORT,
    DEFAULT_WAIT,
    TABLE_CLOSED,
    HostUnreachable,
    JoinRefused,
    LobbyAnswer,
    LobbyError,
    ReadyCheck,
    check_name,
    join_table,
)
from belote_p2p.net.peer import PeerError, PeerResult
from belote_p2p.players.player import Player
from belote_p2p.protocol.directory import Advertisement, DirectoryError, Query
from belote_p2p.protocol.identity import fingerprint
from belote_p2p.protocol.relay import DEFAULT_RELAY_PORT
from belote_p2p.protocol.wire import Envelope

from .home import mention_unfinished
from .lan import (
    DEFAULT_BEACON_ADDRESSES,
    BeaconAddress,
    beacon_address,
    beacon_addresses,
    beacon_listen_help,
    choose_table,
    listen_help,
)
from .public import (
    WAIT_RETRY,
    Finder,
    check_advertised,
    directory_address,
    own_claims,
    ready_answer,
)
from .rematch import asker, join_again, speaker
from .seat import (
    SeatOptions,
    add_seat_arguments,
    exit_status,
    make_player,
    play_seat,
    run_main,
    seat_options,
)
from .watch import add_watch_argument, play_watched
from .wording import error_text, variant_name

INVITATION_CONNECT_TIMEOUT = 5.0
"""Seconds for each address of an invitation before the next one is tried."""
HOST_NAME = re.compile(r"[A-Za-z0-9._-]+|\[?[0-9A-Fa-f:.%]+\]?")
"""What a host name or IP address may look like (no spaces, no punctuation of a sentence)."""


def read_entry(text: str) -> tuple[Invitation | None, list[tuple[str, int]]]:
    """What ``join`` takes, the same in the terminal and the browser lobby: an invitation
    code (the code and its addresses) or ``HOST[:PORT]`` (port 7777 if none); raises
    :class:`InvitationError` for a code that cannot be read and :class:`ValueError` for
    something that is no address."""
    if is_invitation(text):
        invitation = Invitation.decode(text)
        return invitation, [parse_address(a) for a in invitation.addresses]
    host, port = parse_address(text, DEFAULT_PORT)
    if not HOST_NAME.fullmatch(host):
        raise ValueError(f"not a host name or an IP address: {host!r}")
    return None, [(host, port)]


def entry_problem(text: str) -> str | None:
    """Why ``text`` is neither an invitation code nor an address, in the reader's words
    (None: it is one of them)."""
    try:
        read_entry(text)
    except InvitationError:
        return _(
            "This invitation code cannot be read: copy the whole code the host shows "
            "(it starts with belote2)."
        )
    except ValueError:
        return _(
            "This is neither an invitation code nor an address: paste the host's code "
            "(belote2...) or give HOST:PORT, like 192.168.1.20:7777."
        )
    return None


def join_failure_text(exc: Exception) -> str:
    """Why joining failed, in words: a table its host closed before its game says so in
    the reader's language (the other reasons are the host's or the network's own)."""
    if isinstance(exc, JoinRefused) and exc.reason == TABLE_CLOSED:
        return _("The host closed the table before its game began.")
    return str(exc)


def not_joined(options: SeatOptions, exc: Exception) -> int:
    """Say why joining (or playing the seat) failed, at the terminal and on the lobby page
    when there is one; the exit status."""
    said = join_failure_text(exc)
    print(error_text(said), file=sys.stderr, flush=True)
    if options.web is not None and options.web.tell is not None:
        # The lobby page says why too, not only the terminal.
        options.web.tell(_("Not joined: {reason}").format(reason=said))
    return 1


async def find_table(
    options: SeatOptions,
    beacon: BeaconAddress | Sequence[BeaconAddress],
    listen: float,
    ask: Callable[[str], str],
) -> TableAd | None:
    """Listen for beacons for ``listen`` seconds and let the person choose a table: the
    one chosen, or None (after saying why: none heard, none chosen, no socket)."""
    beacons = beacon_addresses(beacon)
    shown = ", ".join(format_address(*b) for b in beacons)
    seconds = format_number(listen, 3, trailing_zeros=False)
    if not options.quiet:
        print(
            _("Listening for tables on the local network ({addresses}, {seconds} s)...").format(
                addresses=shown, seconds=seconds
            ),
            flush=True,
        )
    try:
        ads = await discover_all(beacons, duration=listen)
    except OSError as exc:
        print(
            error_text(
                _("cannot listen for tables on {addresses}: {error}").format(
                    addresses=shown, error=exc.strerror or exc
                )
            ),
            file=sys.stderr,
        )
        return None
    if not ads:
        print(
            _(
                "No open table was heard on the network in {seconds} s; give the host's "
                "invitation code or HOST:PORT."
            ).format(seconds=seconds),
            file=sys.stderr,
        )
        return None

    def choose() -> TableAd | None:
        return choose_table(ads, ask=ask)

    ad = await trio.to_thread.run_sync(choose, abandon_on_cancel=True)
    if ad is None:
        print(_("No table chosen."), file=sys.stderr)
    return ad


def check_host(answer: LobbyAnswer, named: Invitation, where: str, beacon: bool) -> None:
    """The table ``answer`` is the one an invitation or a ``beacon`` ``named``: its id,
    proposed by its host's key (:class:`LobbyError` otherwise: someone may pose as the host,
    or have announced a real host's table at its own address)."""
    definition = answer.definition
    if not named.names_key(definition.host_key):
        if beacon:
            text = _(
                "the host at {address} is not the one of the beacon: its key is {key}, the "
                "beacon's is {named}. Someone may be posing as the host; not joining."
            )
        else:
            text = _(
                "the host at {address} is not the one of the invitation: its key is {key}, "
                "the invitation's is {named}. Someone may be posing as the host; not joining."
            )
        raise LobbyError(
            text.format(
                address=where, key=fingerprint(definition.host_key), named=named.fingerprint
            )
        )
    if not named.names_table(definition.table_id):
        if beacon:
            text = _(
                "the host at {address} opened table {table}, not the beacon's {named}...; "
                "not joining."
            )
        else:
            text = _(
                "the host at {address} opened table {table}, not the invitation's "
                "{named}...; not joining."
            )
        raise LobbyError(
            text.format(
                address=where, table=definition.table_id.hex(), named=named.table_prefix.hex()
            )
        )


async def join_game(
    options: SeatOptions,
    address: str | None,
    *,
    beacon: BeaconAddress | Sequence[BeaconAddress] = DEFAULT_BEACON_ADDRESSES,
    listen: float = DEFAULT_LISTEN,
    ask: Callable[[str], str] = input,
    seat: int | None = None,
    partner: str | None = None,
    watch: bool = True,
) -> int:
    """Join the table of the invitation code or ``HOST:PORT`` ``address``, or (None) one
    heard on the network (beacons at ``beacon``, for ``listen`` seconds) that the person
    chooses (``ask``); ask for ``seat`` or ``partner``; the exit status."""
    player = make_player(options)
    table_id = None
    heard = None
    if address is None:
        heard = await find_table(options, beacon, listen, ask)
        if heard is None:
            return 2
        address, table_id = heard.address, heard.table_id
    try:
        invitation, hosts = read_entry(address)
        if invitation is not None:
            table_id = invitation.table_prefix
        relay = parse_address(options.relay, DEFAULT_RELAY_PORT) if options.relay else None
    except (InvitationError, ValueError) as exc:
        print(error_text(exc), file=sys.stderr)
        return 2
    identity = options.home.identity()
    mention_unfinished(options.home, identity)

    def check(answer: LobbyAnswer, where: str) -> None:
        if invitation is not None:
            check_host(answer, invitation, where, beacon=False)
        if heard is not None:
            beacon_names = Invitation.of(heard.table_id, heard.beacon.host_key, (heard.address,))
            check_host(answer, beacon_names, where, beacon=True)

    try:
        seated = await enter_lobby(
            options, hosts, seat, partner, quick=invitation is not None, table_id=table_id,
            check=check,
        )  # fmt: skip
    except LobbyError as exc:
        return not_joined(options, exc)
    named = invitation.relay if invitation is not None else None
    return await play_joined(options, player, seated, relay, named, watch)


@dataclass
class Seated:
    """A joiner the host seated: its answer, the host's address, our mesh listeners."""

    answer: LobbyAnswer
    where: tuple[str, int]
    mesh_listeners: list[trio.SocketListener]


async def enter_lobby(
    options: SeatOptions,
    hosts: Sequence[tuple[str, int]],
    seat: int | None,
    partner: str | None,
    *,
    quick: bool,
    table_id: bytes | None,
    check: Callable[[LobbyAnswer, str], None],
    ready: Callable[[ReadyCheck], Awaitable[bool]] | None = None,
) -> Seated:
    """Take a seat at the first of ``hosts`` that seats us, its table passing ``check``
    (:class:`LobbyError` otherwise, our listeners closed)."""
    mesh_listeners = await open_listeners(options.bind, 0) if options.listen else []
    mesh_port = listener_port(mesh_listeners[0]) if mesh_listeners else 0
    try:
        answer, where = await reach_lobby(options, hosts, mesh_port, seat, partner,
                                          quick=quick, table_id=table_id,
                                          ready=ready)  # fmt: skip
        check(answer, format_address(*where))
    except LobbyError:
        for listener in mesh_listeners:
            await listener.aclose()
        raise
    return Seated(answer, where, mesh_listeners)


async def play_joined(
    options: SeatOptions,
    player: Player | None,
    seated: Seated,
    relay: tuple[str, int] | None,
    named: str | None,
    watch: bool,
) -> int:
    """Play the seat ``seated`` holds (and the games after, if all agree); the exit status.
    ``relay``: ours (``--relay``), else ``named`` (the invitation's or the ad's), else the
    host's answer's, else the host's port."""
    answer, where, mesh_listeners = seated.answer, seated.where, seated.mesh_listeners
    identity = options.home.identity()
    if not answer.definition.watchers:
        print(_("The host refuses watchers at this table: no seat lets anyone watch it."),
              flush=True)  # fmt: skip
    try:
        if relay is None:
            named = named or answer.relay
            relay = parse_address(named, DEFAULT_RELAY_PORT) if named else where
        # A relay of the table's own: our seat offers the table to its watchers there too.
        feeds = relay if relay != where else None
        chosen = relay
        say = speaker(options.web) if not options.quiet else None

        async def play(on_step: Callable[[Sequence[Envelope]], None] | None) -> PeerResult:
            return await play_seat(
                answer.definition, answer.seat, identity, player, mesh_listeners, options,
                proposal=answer.proposal, relay=chosen, host_address=where, on_step=on_step,
            )  # fmt: skip

        result = await play_watched(
            play, answer.definition, answer.proposal, answer.seat, identity, feeds, watch, say
        )
        while result.finished and options.offers_rematch(player is None):
            again = await join_again(
                answer.definition, identity, options.bind, options.listen, where,
                asker(player is None, options.web), speaker(options.web),
            )  # fmt: skip
            if again is None:
                break
            answer, mesh_listeners = again
            result = await play_watched(
                play, answer.definition, answer.proposal, answer.seat, identity, feeds, watch, say
            )
    except (LobbyError, PeerError, ValueError) as exc:
        for listener in mesh_listeners:
            await listener.aclose()
        return not_joined(options, exc)
    return exit_status(result)


async def join_advertised(options: SeatOptions, ad: Advertisement, *, watch: bool = True) -> int:
    """Take a seat at the one advertised table ``ad`` (the web lobby's "take a seat"),
    its host key checked against the ad; ready at its ready check unless a blocked key
    sits (the person chose the table); the exit status."""
    player = make_player(options)
    identity = options.home.identity()
    ready = ready_answer(options.home, identity.public_key_bytes, None, print)
    options = replace(options, relay=None)
    try:
        hosts = [parse_address(a) for a in ad.addresses]

        def check(answer: LobbyAnswer, where: str) -> None:
            check_advertised(answer, ad, where)

        seated = await enter_lobby(
            options, hosts, None, None, quick=True, table_id=ad.table_id, check=check,
            ready=ready,
        )  # fmt: skip
    except (LobbyError, ValueError) as exc:
        return not_joined(options, exc)
    return await play_joined(options, player, seated, None, ad.relay, watch)


async def join_any(
    options: SeatOptions,
    directory: tuple[str, int],
    query: Query,
    *,
    host_if_none: Callable[[], Awaitable[int]] | None = None,
    ask: Callable[[str], str] | None = None,
    watch: bool = True,
    retry: float = WAIT_RETRY,
) -> int:
    """``join --any``: take a free seat of the first public table at ``directory`` that
    fits ``query`` and where nobody is blocked (its host key checked against the ad before
    we prove ours for it); with none, wait (saying so) or, with ``host_if_none``, open one.
    ``ask``: a person answers the ready check (None: a bot, ready unless a blocked key
    sits)."""
    player = make_player(options)
    identity = options.home.identity()
    mention_unfinished(options.home, identity)

    def say(text: str) -> None:
        if not options.quiet:
            print(text, flush=True)

    finder = Finder(directory, query, options.home, identity.public_key_bytes, say=say,
                    retry=retry)  # fmt: skip
    ready = ready_answer(options.home, identity.public_key_bytes, ask, say)
    # The table names its relay (the ad's, the host's answer's): --relay was the directory.
    options = replace(options, relay=None)
    first = True
    while True:
        for ad in await finder.candidates():
            try:
                hosts = [parse_address(a) for a in ad.addresses]
            except ValueError:
                finder.failed(ad)
                continue
            say(_("Taking a seat at {name}'s table ({variant} to {target}) [{fingerprint}]").format(
                name=ad.name, variant=variant_name(ad.variant), target=ad.target,
                fingerprint=fingerprint(ad.host_key)))  # fmt: skip

            def check(answer: LobbyAnswer, where: str, ad: Advertisement = ad) -> None:
                check_advertised(answer, ad, where)

            try:
                seated = await enter_lobby(
                    options, hosts, None, None, quick=True, table_id=ad.table_id,
                    check=check, ready=ready,
                )  # fmt: skip
            except LobbyError as exc:
                say(_("That table did not seat us ({error}): looking for another.").format(
                    error=exc))  # fmt: skip
                finder.failed(ad)
                continue
            return await play_joined(options, player, seated, None, ad.relay, watch)
        if host_if_none is not None:
            say(_("No public table has a free seat: opening one."))
            return await host_if_none()
        await finder.wait(first)
        first = False


async def reach_lobby(
    options: SeatOptions,
    hosts: Sequence[tuple[str, int]],
    mesh_port: int,
    seat: int | None,
    partner: str | None,
    *,
    quick: bool,
    table_id: bytes | None = None,
    ready: Callable[[ReadyCheck], Awaitable[bool]] | None = None,
) -> tuple[LobbyAnswer, tuple[str, int]]:
    """Join at the first of ``hosts`` that answers (and opened ``table_id``, if given); the
    answer and the address used. We tell the host our language and level (our claims, its
    ready check shows them); ``ready`` answers its ready check."""
    identity = options.home.identity()
    lang, level = own_claims(options.home, identity.public_key_bytes)
    failures = []
    for host, port in hosts:
        if not options.quiet:
            print(
                _("Joining {address} as {name} [{fingerprint}]").format(
                    address=format_address(host, port), name=options.name,
                    fingerprint=identity.fingerprint,
                ),
                flush=True,
            )  # fmt: skip
        try:
            answer = await join_table(
                host, port, options.name, identity, mesh_port,
                wait=DEFAULT_WAIT, seat=seat, partner=partner, table_id=table_id,
                connect_timeout=INVITATION_CONNECT_TIMEOUT if quick else 10.0,
                on_proven=None if options.quiet else waiting_for_the_table,
                ready=ready, lang=lang, level=level,
            )  # fmt: skip
        except HostUnreachable as exc:
            failures.append(str(exc))
            continue
        return answer, (host, port)
    raise LobbyError("; ".join(failures))


def waiting_for_the_table() -> None:
    print(
        _(
            "In the lobby: waiting for the other players, then the host arranges the seats "
            "(the table shows when the game begins)."
        ),
        flush=True,
    )


def cmd_join(args: argparse.Namespace) -> int:
    try:
        options = seat_options(args)
        beacon = [beacon_address(a) for a in args.beacon_address or ()]
        if options.relay:
            parse_address(options.relay, DEFAULT_RELAY_PORT)
        if args.partner is not None:
            check_name(args.partner)
        if args.any:
            if args.address is not None:
                raise ValueError(_("--any finds a table itself: give no code or address"))
            if not options.relay:
                raise ValueError(_("--any needs --relay HOST:PORT, a relay with a directory"))
            query = Query(args.variant, getattr(args, "lang", None))
        elif args.variant is not None or args.host_if_none:
            raise ValueError(_("--variant and --host-if-none go with --any"))
    except (ValueError, DirectoryError) as exc:
        print(error_text(exc), file=sys.stderr)
        return 2
    if args.any:
        return cmd_join_any(args, options, query)

    async def main() -> int:
        return await join_game(
            options, args.address, beacon=beacon or DEFAULT_BEACON_ADDRESSES,
            listen=args.listen_seconds, seat=args.seat, partner=args.partner, watch=args.watch,
        )  # fmt: skip

    return run_main(main)


def cmd_join_any(args: argparse.Namespace, options: SeatOptions, query: Query) -> int:
    """``join --any``, and with ``--host-if-none`` the public table it opens otherwise."""
    from belote_p2p.game.rules import rule_set

    from .host import host_game

    assert options.relay is not None
    directory = directory_address(options.relay)
    person = options.bot is None and sys.stdin.isatty()
    host_if_none = None
    if args.host_if_none:
        rules = rule_set(query.variant or "classic")

        async def host_if_none() -> int:
            # Port 0: the ad carries the port chosen; strangers need not know it beforehand.
            return await host_game(options, rules, 0, 0, public=True, watch=args.watch,
                                   ask=input if person else None)  # fmt: skip

    async def main() -> int:
        return await join_any(
            options, directory, query, host_if_none=host_if_none,
            ask=input if person else None, watch=args.watch,
        )  # fmt: skip

    return run_main(main)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    join = sub.add_parser(
        "join",
        help=_("join a table"),
        description=_(
            "Join the table of an invitation code (printed by `host`) or hosted at HOST:PORT "
            "and play the seat it gives (at the terminal, or with --bot). With a code, a "
            "table not proposed by the code's host key is refused. Without either, listen "
            "for the tables announced on the local network and choose one (exit status 2 if "
            "none is heard)."
        ),
    )
    join.add_argument(
        "address", nargs="?", metavar=_("CODE|HOST:PORT"),
        help=_(
            "the host's invitation code, or its address (port {port}); none: find a table on "
            "the network"
        ).format(port=DEFAULT_PORT),
    )  # fmt: skip
    join.add_argument(
        "--seat", type=int, choices=range(1, 4), metavar="N",
        help=_(
            "ask for seat 1, 2 or 3 (2 is the host's partner); refused if another joiner "
            "holds it (none)"
        ),
    )  # fmt: skip
    join.add_argument(
        "--partner", metavar=_("NAME"),
        help=_("ask to sit opposite this player (the host, or another joiner) (none)"),
    )  # fmt: skip
    join.add_argument(
        "--beacon-address", action="append", metavar=_("IP[:PORT]"), help=beacon_listen_help()
    )
    join.add_argument(
        "--listen", dest="listen_seconds", type=positive_seconds, default=DEFAULT_LISTEN,
        metavar=_("S"), help=listen_help(),
    )  # fmt: skip
    join.add_argument(
        "--any", action="store_true",
        help=_(
            "take a free seat of the first public table that fits, from the directory of "
            "--relay HOST:PORT (`relay --directory`); waits, saying so, while none is open"
        ),
    )  # fmt: skip
    join.add_argument(
        "--variant", choices=sorted(RULE_SETS), metavar=_("VARIANT"),
        help=_("with --any: only tables of this variant (any)"),
    )  # fmt: skip
    join.add_argument(
        "--host-if-none", action="store_true",
        help=_("with --any: when no public table has a free seat, open one (public) instead "
               "of waiting"),
    )  # fmt: skip
    add_seat_arguments(join)
    add_watch_argument(join)
    join.set_defaults(func=cmd_join)
