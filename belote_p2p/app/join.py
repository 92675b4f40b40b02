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
from collections.abc import Callable, Sequence

import trio

from belote_p2p.app.argtypes import positive_seconds
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
    check_name,
    join_table,
)
from belote_p2p.net.peer import PeerError, PeerResult
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
from .wording import error_text

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


def join_failure_text(exc: LobbyError | PeerError) -> str:
    """Why joining failed, in words: a table its host closed before its game says so in
    the reader's language (the other reasons are the host's or the network's own)."""
    if isinstance(exc, JoinRefused) and exc.reason == TABLE_CLOSED:
        return _("The host closed the table before its game began.")
    return str(exc)


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
    mesh_listeners = await open_listeners(options.bind, 0) if options.listen else []
    mesh_port = listener_port(mesh_listeners[0]) if mesh_listeners else 0
    try:
        answer, where = await reach_lobby(options, hosts, mesh_port, seat, partner,
                                          quick=invitation is not None,
                                          table_id=table_id)  # fmt: skip
        if invitation is not None:
            check_host(answer, invitation, format_address(*where), beacon=False)
        if heard is not None:
            beacon_names = Invitation.of(heard.table_id, heard.beacon.host_key, (address,))
            check_host(answer, beacon_names, format_address(*where), beacon=True)
        if relay is None:
            named = invitation.relay if invitation is not None else answer.relay
            relay = parse_address(named, DEFAULT_RELAY_PORT) if named else where
        # A relay of the table's own: our seat offers the table to its watchers there too.
        feeds = relay if relay != where else None

        async def play(on_step: Callable[[Sequence[Envelope]], None] | None) -> PeerResult:
            return await play_seat(
                answer.definition, answer.seat, identity, player, mesh_listeners, options,
                proposal=answer.proposal, relay=relay, host_address=where, on_step=on_step,
            )  # fmt: skip

        result = await play_watched(
            play, answer.definition, answer.proposal, answer.seat, identity, feeds, watch
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
                play, answer.definition, answer.proposal, answer.seat, identity, feeds, watch
            )
    except (LobbyError, PeerError) as exc:
        for listener in mesh_listeners:
            await listener.aclose()
        said = join_failure_text(exc)
        print(error_text(said), file=sys.stderr, flush=True)
        if options.web is not None and options.web.tell is not None:
            # The lobby page says why too, not only the terminal.
            options.web.tell(_("Not joined: {reason}").format(reason=said))
        return 1
    return exit_status(result)


async def reach_lobby(
    options: SeatOptions,
    hosts: Sequence[tuple[str, int]],
    mesh_port: int,
    seat: int | None,
    partner: str | None,
    *,
    quick: bool,
    table_id: bytes | None = None,
) -> tuple[LobbyAnswer, tuple[str, int]]:
    """Join at the first of ``hosts`` that answers (and opened ``table_id``, if given); the
    answer and the address used."""
    identity = options.home.identity()
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
    except Exception as exc:
        print(error_text(exc), file=sys.stderr)
        return 2

    async def main() -> int:
        return await join_game(
            options, args.address, beacon=beacon or DEFAULT_BEACON_ADDRESSES,
            listen=args.listen_seconds, seat=args.seat, partner=args.partner, watch=args.watch,
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
    add_seat_arguments(join)
    add_watch_argument(join)
    join.set_defaults(func=cmd_join)
