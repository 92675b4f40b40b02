"""``belote-p2p host``: open a table (the lobby, :mod:`belote_p2p.net.lobby`) and play seat 0.

The host's one TCP port (``--port``, 7777) serves the lobby, the host's side of the mesh and
a relay for the peers that cannot connect to each other (:class:`~belote_p2p.net.relay.
HostPort`), until the game is over. The host prints an invitation code
(:mod:`belote_p2p.net.invite`) that ``join`` takes instead of an address. ``--bots N`` starts
N local bot peer processes (``--bots N:NAME`` or ``--fill NAME``: which bot; ``rules`` by
default). After a game played out, the same port gathers the answers to another game
(:mod:`.rematch`). While its lobby has seats free for others, the host sends a UDP
beacon every second (``--no-beacon`` to stay unannounced, ``--beacon-address`` to send
elsewhere than the defaults). ``--seat-order`` names the joiners (names or key fingerprints)
for seats 1, 2...: anyone else is refused at once. Without it, once the table is full a
person at a terminal is asked: swap two seats, refuse a joiner (it is told, and its seat
goes to the next joiner), or start.
"""

from __future__ import annotations

import argparse
import errno
import sys
from collections.abc import Awaitable, Callable, Sequence
from functools import partial

import trio

from belote_p2p.app.argtypes import port, positive_int
from belote_p2p.game.rules import RULE_SETS, RuleSet, rule_set
from belote_p2p.i18n import N_, _, ngettext
from belote_p2p.net.address import (
    format_address,
    listener_port,
    local_addresses,
    loopback_for,
    open_listeners,
    parse_address,
)
from belote_p2p.net.directory import Advertiser
from belote_p2p.net.discovery import (
    Beacon,
    send_beacons,
)
from belote_p2p.net.invite import MAX_ADDRESSES, Invitation
from belote_p2p.net.lobby import (
    DEFAULT_PORT,
    JoinRefused,
    JoinRequest,
    Lobby,
    LobbyClosed,
    LobbyError,
    host_lobby,
)
from belote_p2p.net.peer import PeerError, PeerResult
from belote_p2p.net.relay import HostPort
from belote_p2p.net.transport import Mesh
from belote_p2p.players.bots import make_bot
from belote_p2p.protocol.identity import fingerprint
from belote_p2p.protocol.relay import DEFAULT_RELAY_PORT

from .blocklist import BlockList
from .botprocs import (
    BOT_PROCESS_GRACE,
    BotProcess,
    bot_command,
    bot_name,
    bot_seats,
    check_agreement,
    run_bot_process,
)
from .home import mention_unfinished
from .lan import (
    DEFAULT_BEACON_ADDRESSES,
    BeaconAddress,
    beacon_address,
    beacon_addresses,
    beacon_text,
    send_last_beacon,
)
from .output import hints_rule_text
from .public import advertising_line, table_ad_maker
from .rematch import asker, host_again, speaker
from .seat import (
    SeatOptions,
    add_seat_arguments,
    exit_status,
    make_player,
    play_seat,
    run_main,
    seat_options,
)
from .watch import (
    add_watch_argument,
    drain_watchers,
    host_watchers,
    offer_feed,
    say_watch_code,
    watch_end,
)
from .wording import error_text, game_text, variant_name

CLOSED = 4
"""What :func:`host_game` returns for a table its host closed before the game (``closed``,
the browser lobby's Stop hosting; never a command's exit status)."""


async def host_game(
    options: SeatOptions,
    rules: RuleSet,
    port: int,
    bots: int,
    *,
    beacon: BeaconAddress | Sequence[BeaconAddress] | None = None,
    seat_order: Sequence[str] | None = None,
    advertise: Sequence[str] = (),
    ask: Callable[[str], str] | None = None,
    fill: str = "rules",
    watch: bool = True,
    hints: bool = False,
    public: bool = False,
    closed: trio.Event | None = None,
) -> int:
    """Host a table, optionally with ``bots`` local bot processes; the exit status.

    ``beacon``: where to announce the table (:func:`~belote_p2p.net.discovery.send_beacons`)
    while seats are free for others (None: not announced). ``seat_order``: the joiners'
    names (or key fingerprints) for seats 1, 2...: nobody else is seated, and they sit so
    once the table is full; else ``ask`` (a person at a terminal) may swap seats or refuse
    joiners then (:func:`prompt_seats`). ``advertise``: addresses (``HOST[:PORT]``) to put first
    in the invitation (a public name, a router's forwarded port). ``fill``: the bot of the
    bot processes. ``watch``: the port serves watchers (:mod:`.watch`). ``hints``: the
    table's rule that every seat may ask its own peer's expert for advice (signed in the
    definition, shown to every seat). ``public``: the table is listed in the directory of
    the relay (``options.relay``) while it has seats for strangers (:mod:`.public`), and
    its joiners are asked if they are ready once it is full. Every table's lobby refuses
    the keys of the home's block list (:mod:`.blocklist`). ``closed``: set, it closes the
    table while its lobby waits for players (the joiners are told, the port and the bot
    processes close; then :data:`CLOSED`); a game begun goes on."""
    identity = options.home.identity()
    mention_unfinished(options.home, identity)
    player = make_player(options)
    if bots:
        make_bot(fill)  # BotError now, not in three processes later
    try:
        listeners = await open_listeners(options.bind, port)
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            raise
        print(
            error_text(
                _("port {port} is in use (another table?); choose another with --port").format(
                    port=port
                )
            ),
            file=sys.stderr,
        )
        return 1
    host_port = listener_port(listeners[0])
    if options.relay:
        relay = parse_address(options.relay, DEFAULT_RELAY_PORT)
    else:
        relay = (loopback_for(options.bind), host_port)
    own_port = host_port if options.listen else 0
    own = JoinRequest(options.name, identity.public_key_bytes, own_port)
    lobby = Lobby(own, rules, watchers=watch, hints=hints)
    home = options.home
    lobby.block(lambda key: BlockList.of(home).blocks(key))  # read at each join: `block` now
    if seat_order:
        lobby.expect(seat_order)
    addresses = [format_address(*parse_address(a, host_port)) for a in advertise]
    addresses += [format_address(ip, host_port) for ip in local_addresses(options.bind)]
    addresses = list(dict.fromkeys(addresses))[:MAX_ADDRESSES]
    invitation = Invitation.of(
        lobby.table_id,
        identity.public_key_bytes,
        tuple(addresses),
        format_address(*relay) if options.relay else None,
    )
    code = invitation.encode()
    shown = addresses[0]

    def say(text: str) -> None:
        if not options.quiet:
            print(text, flush=True)

    game = game_text(rules.name, rules.target)
    say(
        _("Hosting table {table} ({game}) as {name} [{fingerprint}]").format(
            table=lobby.table_id.hex(),
            game=game,
            name=options.name,
            fingerprint=identity.fingerprint,
        )
    )
    say(
        _("Lobby listening on {address} (also the table's port and relay; all: {all})").format(
            address=shown, all=", ".join(addresses)
        )
    )
    if hints:
        say(hints_rule_text())
    say(_("Invitation code:") + f"\n  {code}")
    name_word = _("NAME")
    join_line = _("Others join with:  {command}").format(
        command=f"belote-p2p join {code} --name {name_word}"
    )
    say(join_line)
    say(
        "  "
        + _("(or, where this address reaches us:  {command})").format(
            command=f"belote-p2p join {shown} --name {name_word}"
        )
    )
    say_watch_code(invitation, watch, say)

    tell = options.web.tell if options.web is not None else None

    def lobby_news(news: str) -> None:
        """A joiner came or went: said at the terminal, and on the lobby page."""
        say(f"  {news}" + waiting())
        tell_page(_("{news}.").format(news=news) + " ")

    def tell_page(news: str) -> None:
        """The lobby page's line (the page has no scrolling log): the last news, what the
        table waits for and how others join."""
        if tell is None:
            return
        seats = bot_seats(rules.seats, bots)
        bots_in = sum(1 for at, r in lobby.seating() if at in seats and r.name == bot_name(at))
        people = rules.seats - 1 - bots - (len(lobby.joined) - bots_in)
        if people > 0:
            state = ngettext(
                "Your table ({game}) is waiting for {n} more player.",
                "Your table ({game}) is waiting for {n} more players.",
                people,
            ).format(game=game, n=people)
        elif lobby.full:
            state = _("Your table ({game}) is full.").format(game=game)
        else:
            state = _("Your table ({game}) is waiting for its bots to sit down.").format(game=game)
        line = f"{news}{state}"
        if people > 0:
            line += "\n" + join_line
        tell(line)

    tell_page("")

    def joined(seat: int, request: JoinRequest) -> None:
        if advertiser is not None:
            advertiser.changed()
        lobby_news(
            _("{name} [{fingerprint}] joined: seat {seat}").format(
                name=request.name, fingerprint=fingerprint(request.key), seat=seat
            )
        )

    def left(request: JoinRequest) -> None:
        if advertiser is not None:
            advertiser.changed()
        lobby_news(
            _("{name} [{fingerprint}] left the lobby").format(
                name=request.name, fingerprint=fingerprint(request.key)
            )
        )

    def waiting() -> str:
        more = lobby.missing
        return " " + _("(waiting for {n} more)").format(n=more) if more else ""

    lobby_address = format_address(loopback_for(options.bind), host_port)
    rematch = options.offers_rematch(player is None)
    procs = [
        BotProcess(
            k,
            bot_command(k, lobby_address, options, fill, rematch=rematch),
            options.home.bot(k),
            hold_log=player is None,
        )
        for k in bot_seats(rules.seats, bots)
    ]

    def table_beacon(free: int) -> Beacon | None:
        try:
            return Beacon(
                options.name, rules.name, rules.target, free, host_port, lobby.table_id,
                identity.public_key_bytes,
            )  # fmt: skip
        except ValueError:  # a name a beacon cannot carry: the table is not announced
            return None

    def free_seats() -> int:
        # Seats for others: the bot processes' seats are not (they may not have joined yet).
        others = rules.seats - 1
        return min(others - len(lobby.joined), others - bots)

    def open_seats() -> Beacon | None:
        free = free_seats()
        return table_beacon(free) if free > 0 else None

    advertiser = None
    if public and options.relay:
        directory = format_address(*relay)
        advertiser = Advertiser(
            relay, identity, table_ad_maker(lobby, identity, invitation, free_seats, home),
            on_state=lambda state: say(advertising_line(state, directory)),
        )  # fmt: skip

    def not_ready(request: JoinRequest, why: str) -> None:
        if advertiser is not None:
            advertiser.changed()
        lobby_news(
            _("{name} [{fingerprint}] lost the seat: {why}").format(
                name=request.name, fingerprint=fingerprint(request.key), why=why
            )
        )

    beacons = beacon_addresses(beacon)
    beacon_scope = trio.CancelScope()
    listing_scope = trio.CancelScope()

    async def listing(advertiser: Advertiser) -> None:
        # Cancelled once the table is signed: the ad's connection closes, the relay forgets it.
        with listing_scope:
            await advertiser.run()

    async def announce() -> None:
        with beacon_scope:
            async with trio.open_nursery() as each:
                for address in beacons:
                    each.start_soon(partial(send_beacons, open_seats, address=address))

    async def arrange(full: Lobby) -> None:
        if seat_order:
            try:
                full.reorder(seat_order)
            except JoinRefused as exc:
                print(
                    _("warning: --seat-order not applied: {reason}").format(reason=exc.reason),
                    file=sys.stderr,
                )
        elif ask is not None:
            await prompt_seats(full, ask)
        if full.full:
            say(_("Seats: {seats}").format(seats=describe_seats(full)))

    port_service = HostPort()
    hub = host_watchers(port_service, lobby.table_id, watch)
    # A relay of the table's own: watchers reach our seat there too (offer_feed).
    feeds = relay if options.relay else None

    def hand_over(handler: Callable[[trio.abc.Stream], Awaitable[None]] | None) -> None:
        port_service.lobby = handler

    def on_mesh(mesh: Mesh) -> None:
        port_service.set_mesh(mesh.incoming)

    result: PeerResult | None = None
    seated = False
    async with trio.open_nursery() as service:
        await service.start(port_service.serve, listeners)
        async with trio.open_nursery() as nursery:
            for proc in procs:
                nursery.start_soon(run_bot_process, proc, fill)
            if beacons and bots < rules.seats - 1:
                say(
                    _("Announcing the table on the local network ({addresses})").format(
                        addresses=", ".join(format_address(*b) for b in beacons)
                    )
                )
                nursery.start_soon(announce)
            if advertiser is not None:
                nursery.start_soon(partial(listing, advertiser))
            try:
                try:
                    definition, proposal = await host_lobby(
                        lobby, [], identity, on_join=joined, on_leave=left, arrange=arrange,
                        hand_over=hand_over,
                        relay=invitation.relay, ready_check=public, on_not_ready=not_ready,
                        closed=closed,
                    )  # fmt: skip
                finally:
                    beacon_scope.cancel()
                    listing_scope.cancel()
                seated = True
                last = table_beacon(0)
                if beacons and bots < rules.seats - 1 and last is not None:
                    for address in beacons:
                        await send_last_beacon(last, address)
                hub.open(definition, proposal)
                feeding = offer_feed(service, hub, feeds, identity, 0)
                result = await play_seat(
                    definition, 0, identity, player, [], options, proposal=proposal,
                    relay=relay, on_mesh=on_mesh, on_step=hub.publish,
                )  # fmt: skip
                hub.finish(watch_end(result))
                while result.finished and rematch:
                    port_service.set_mesh(None)  # the next table's connections wait for it
                    ask_again = asker(player is None, options.web)
                    again = await host_again(definition, identity, own_port, ask_again,
                                             hand_over, invitation.relay,
                                             speaker(options.web))  # fmt: skip
                    if again is None:
                        break
                    definition, proposal = again
                    feeding.cancel()  # the last table's feed: the next one's is offered now
                    hub.open(definition, proposal)
                    feeding = offer_feed(service, hub, feeds, identity, 0)
                    again_code = Invitation.of(
                        definition.table_id, identity.public_key_bytes, invitation.addresses,
                        invitation.relay,
                    )  # fmt: skip
                    say_watch_code(again_code, watch, say)
                    result = await play_seat(
                        definition, 0, identity, player, [], options, proposal=proposal,
                        relay=relay, on_mesh=on_mesh, on_step=hub.publish,
                    )  # fmt: skip
                    hub.finish(watch_end(result))
            except LobbyClosed:
                say(_("You closed the table: the players who had joined are told."))
                nursery.cancel_scope.cancel()
            except (LobbyError, PeerError) as exc:
                print(error_text(exc), file=sys.stderr, flush=True)
                nursery.cancel_scope.cancel()
            finally:
                if not seated:
                    # Leaving the lobby (an error, Ctrl-C): no game, no bot process to keep.
                    for proc in procs:
                        proc.terminate()
            # A crash of ours never gets here: the bot processes play on, for a resume. So
            # do they once we left a game that goes on (our partner plays our open hand).
            we_left = result is not None and result.left == 0
            with trio.move_on_after(0 if we_left else BOT_PROCESS_GRACE):
                while any(p.status is None for p in procs):
                    await trio.sleep(0.1)
            for proc in procs if not we_left else ():
                proc.terminate()
            nursery.cancel_scope.cancel()
        await drain_watchers(hub, say)
        service.cancel_scope.cancel()
    if result is None:
        return CLOSED if closed is not None and closed.is_set() and not seated else 1
    status = exit_status(result)
    if not result.finished:
        return status  # abandoned or stopped: the bots saw it too, nothing to compare
    for proc in procs:
        if proc.status != 0 and proc.number == result.left:
            # Its seat left and its partner played on: the game is whole without it.
            print(
                _("Bot process {number} exited with {status}: its seat left.").format(
                    number=proc.number, status=proc.status
                )
            )
        elif proc.status != 0:
            print(
                error_text(
                    _("bot process {number} exited with {status}").format(
                        number=proc.number, status=proc.status
                    )
                ),
                file=sys.stderr,
            )
            status = 1
    if procs:
        status = max(
            status, check_agreement(result, {p.number: p.result for p in procs}, options.quiet)
        )
    return status


def describe_seats(lobby: Lobby) -> str:
    """``1 Bob, 2 Carol (partner of Alice), 3 Dan`` (no partners without teams)."""
    words = []
    seating = lobby.seating()
    for seat, request in seating:
        if not lobby.rules.has_teams:
            words.append(f"{seat} {request.name}")
            continue
        opposite = lobby.opposite(seat)
        partner = lobby.host.name if opposite == 0 else None
        if partner is None:
            partner = next((r.name for s, r in seating if s == opposite), None)
        if partner:
            words.append(
                _("{seat} {name} (partner of {partner})").format(
                    seat=seat, name=request.name, partner=partner
                )
            )
        else:
            words.append(f"{seat} {request.name}")
    return ", ".join(words)


PROMPT = N_("Enter to start, two seats to swap (e.g. 1 2), or refuse N: ")
REFUSE_WORDS = frozenset({"refuse", "r", "kick", "refuser", "rechazar"})
"""What refuses a joiner at the seats prompt, in any language (``refuse 2``, ``r 2``)."""
SWAP_WORDS = frozenset({"swap", "echanger", "échanger", "cambiar"})


async def prompt_seats(lobby: Lobby, ask: Callable[[str], str]) -> None:
    """Let the host swap seats, or refuse a joiner, until it answers nothing (with teams,
    seats 1 and 3 are partners, 2 is the host's partner). A refused joiner's seat is free
    again: the lobby waits for the next joiner, then asks again. ``ask`` (``input``) runs
    in a thread; the lobby is changed in trio's."""
    seats = ", ".join(str(s) for s in range(1, lobby.seats))
    while lobby.full:
        print(_("Seats: {seats}").format(seats=describe_seats(lobby)), flush=True)
        try:
            answer = await trio.to_thread.run_sync(ask, _(PROMPT), abandon_on_cancel=True)
        except EOFError:
            return
        words = answer.replace(",", " ").lower().split()
        if not words:
            return
        if not lobby.full:
            break  # someone left while we asked: the lobby waits for another joiner
        try:
            if words[0] in REFUSE_WORDS and len(words) == 2:
                gone = lobby.refuse(int(words[1]))
                print(
                    _(
                        "Refused {name} [{fingerprint}]: seat {seat} goes to the next joiner."
                    ).format(name=gone.name, fingerprint=fingerprint(gone.key), seat=words[1]),
                    flush=True,
                )
                return
            if words[0] in SWAP_WORDS:
                words = words[1:]
            a, b = (int(w) for w in words)
            lobby.swap(a, b)
        except (ValueError, JoinRefused):
            print(
                _(
                    "Answer two seats out of {seats} to swap, refuse and a seat, or nothing to "
                    "start."
                ).format(seats=seats),
                flush=True,
            )
    print(_("A joiner left: waiting for another."), flush=True)


def bots_option(text: str) -> tuple[int, str | None]:
    """``--bots N`` or ``--bots N:NAME[:key=value...]``: how many bot processes, which bot."""
    count, _colon, spec = text.partition(":")
    if not count.isdigit() or not 0 <= int(count) <= 3:
        raise argparse.ArgumentTypeError(
            _("{text!r}: N (0 to 3), or N:BOT like 3:pimc").format(text=text)
        )
    return int(count), spec or None


def cmd_host(args: argparse.Namespace) -> int:
    try:
        options = seat_options(args)
        rules = rule_set(args.variant, target=args.target, first_dealer=args.first_dealer)
        chosen = [beacon_address(a) for a in args.beacon_address or ()]
        beacon = (chosen or list(DEFAULT_BEACON_ADDRESSES)) if args.beacon else None
        if options.relay:
            parse_address(options.relay, DEFAULT_RELAY_PORT)
        order = [n.strip() for n in args.seat_order.split(",")] if args.seat_order else None
        joiners = rules.seats - 1
        if order is not None and len(order) != joiners:
            raise ValueError(
                _("--seat-order names the {n} joiners, for seats 1 to {n}").format(n=joiners)
            )
        for address in args.advertise:
            parse_address(address, 1)
        if args.public and not options.relay:
            raise ValueError(_("--public needs --relay HOST:PORT, a relay with a directory "
                               "(`belote-p2p relay --directory`)"))  # fmt: skip
    except Exception as exc:
        print(error_text(exc), file=sys.stderr)
        return 2
    bots, spec = args.bots
    if not 0 <= bots <= rules.seats - 1:
        print(
            error_text(
                _("--bots is 0 to {most} at a {variant} table").format(
                    most=rules.seats - 1, variant=variant_name(rules.name)
                )
            ),
            file=sys.stderr,
        )
        return 2
    if spec is not None and args.fill is not None and spec != args.fill:
        print(error_text(_("--bots N:BOT and --fill BOT name two bots")), file=sys.stderr)
        return 2
    fill = spec or args.fill or "rules"
    # A person at a terminal may swap the seats of the players who joined (not of its own
    # bots: with --bots 3 there is nobody to ask about).
    person = options.bot is None and sys.stdin.isatty()
    ask = input if person and order is None and bots < rules.seats - 1 else None
    main = partial(
        host_game, options, rules, args.port, bots, beacon=beacon, seat_order=order,
        advertise=args.advertise, ask=ask, fill=fill, watch=args.watch, hints=args.hints,
        public=args.public,
    )  # fmt: skip
    return run_main(main)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    variants = sorted(RULE_SETS)
    host = sub.add_parser(
        "host",
        help=_("open a table and play seat 0"),
        description=_(
            "Open a table: wait for three players to join, then play seat 0 (at the "
            "terminal, or with --bot). Prints an invitation code for `join`. The host's one "
            "port serves the lobby, the table and a relay for the peers that cannot reach "
            "each other directly (behind a home router, --no-listen); --relay names another "
            "relay (`belote-p2p relay` on a public machine). --bots N starts N local bot "
            "peer processes. After a game played out, everyone is asked whether to play "
            "again."
        ),
    )
    host.add_argument(
        "--port", type=port, default=DEFAULT_PORT, metavar=_("PORT"),
        help=_("the host's port: lobby, table and relay ({port}; 0: any)").format(
            port=DEFAULT_PORT
        ),
    )  # fmt: skip
    host.add_argument("--variant", choices=variants, default="classic", help=_("the rules"))
    host.add_argument(
        "--target", type=positive_int, default=501, metavar=_("POINTS"),
        help=_("score that wins the game"),
    )  # fmt: skip
    host.add_argument(
        "--bots", type=bots_option, default=(0, None), metavar=_("N[:BOT]"),
        help=_(
            "start N local bot peers, each its own process (3:pimc: of the pimc bot) (none)"
        ),
    )  # fmt: skip
    host.add_argument(
        "--fill", metavar=_("BOT"),
        help=_("the bot of the --bots peers, NAME[:key=value...] (rules)"),
    )  # fmt: skip
    host.add_argument(
        "--first-dealer", type=int, default=0, choices=range(4), metavar=_("SEAT"),
        help=_("the seat that deals the first round (0)"),
    )  # fmt: skip
    host.add_argument(
        "--seat-order", metavar=_("NAME,NAME,NAME"),
        help=_(
            "the joiners' names (or key fingerprints, as `join` prints them) for seats 1, 2 "
            "and 3 (1 and 2 with three seats, 1 with two): anyone else is refused, and they "
            "sit so once the table is full (seat 2 is your partner; 1 and 3 are partners); "
            "by default, their requests, then arrival order, and a person at a terminal may "
            "swap seats or refuse a joiner"
        ),
    )  # fmt: skip
    host.add_argument(
        "--advertise", action="append", default=[], metavar=_("HOST[:PORT]"),
        help=_(
            "an address that reaches this port from outside (a public name, the router's "
            "forwarded port), put first in the invitation; may be repeated (none)"
        ),
    )  # fmt: skip
    host.add_argument(
        "--beacon", action=argparse.BooleanOptionalAction, default=True,
        help=_("announce the table on the local network while seats are free ({on})").format(
            on=_("on")
        ),
    )  # fmt: skip
    host.add_argument(
        "--beacon-address", action="append", metavar=_("IP[:PORT]"),
        default=None,
        help=_("where the beacons go; may be repeated ({addresses})").format(
            addresses=beacon_text()
        ),
    )  # fmt: skip
    host.add_argument(
        "--hints", action="store_true",
        help=_("a rule of the table, signed and shown to every seat: each may ask its own "
               "peer's expert for its choice and why (hint, or Tab) ({off})").format(off=_("off")),
    )  # fmt: skip
    host.add_argument(
        "--public", action="store_true",
        help=_("list the table in the public directory of --relay HOST:PORT (`relay "
               "--directory`) while it has free seats, for strangers to find (`join --any`, "
               "`tables --relay`); its joiners are asked if they are ready once it is full"),
    )  # fmt: skip
    add_watch_argument(host)
    add_seat_arguments(host)
    host.set_defaults(func=cmd_host)
