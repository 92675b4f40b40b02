"""``belote-p2p resume``: go on with a game after a crash.

The table and our seat come from the transcript (by default the one unfinished game of this
identity in its home); the peer listens again at its seat's address (the host: its whole
port, relay included; nothing with ``--no-listen`` or when it did not listen), reconnects to
the others, directly or through the relay (``--relay``, by default the host's port), and
plays on. ``host`` and ``join`` only mention an unfinished game; they never
resume one by themselves.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import trio

from belote_p2p.i18n import _, ngettext
from belote_p2p.net.address import (
    open_listeners,
    parse_address,
)
from belote_p2p.net.invite import Invitation
from belote_p2p.net.peer import PeerError, PeerResult
from belote_p2p.net.relay import HostPort
from belote_p2p.protocol.relay import DEFAULT_RELAY_PORT
from belote_p2p.protocol.secretstore import SecretStoreError
from belote_p2p.protocol.transcript import TranscriptError, read_transcript
from belote_p2p.protocol.wire import Envelope

from .botprocs import restart_bot_processes
from .home import game_ended, unfinished_games
from .rematch import print_line
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
    play_watched,
    recorded_proposal,
    say_watch_code,
    watch_end,
)
from .wording import error_text


async def resume_game(options: SeatOptions, path: Path | None, *, watch: bool = True) -> int:
    """Go on with the game of ``path`` (default: the one unfinished game in the home);
    ``watch``: the host's port serves watchers again (the same watch code)."""
    identity = options.home.identity()
    path_given = path is not None
    if path is None:
        games = unfinished_games(options.home, identity)
        if not games:
            print(
                error_text(_("no unfinished game in {folder}").format(folder=options.home.games)),
                file=sys.stderr,
            )
            return 2
        if len(games) > 1:
            print(error_text(_("several unfinished games; name one:")), file=sys.stderr)
            for game in games:
                name = options.home.transcript(game.definition, game.seat)
                print(f"  belote-p2p resume {name}", file=sys.stderr)
            return 2
        game = games[0]
        path = options.home.transcript(game.definition, game.seat)
    else:
        try:
            game = read_transcript(path)
        except (OSError, TranscriptError) as exc:
            print(error_text(exc), file=sys.stderr)
            return 2
    definition, seat = game.definition, game.seat
    if definition.seats[seat].key != identity.public_key_bytes:
        print(
            error_text(
                _("{file} is seat {seat}'s, whose key is not {home}'s identity").format(
                    file=path, seat=seat, home=options.home
                )
            ),
            file=sys.stderr,
        )
        return 2
    if path_given and game_ended(definition, game.envelopes, seat):  # else found unfinished
        print(error_text(_("the game of {file} is over").format(file=path)), file=sys.stderr)
        return 2
    if not options.quiet:
        print(
            ngettext(
                "Resuming table {table}, seat {seat}, from {file} ({n} envelope)",
                "Resuming table {table}, seat {seat}, from {file} ({n} envelopes)",
                len(game.envelopes),
            ).format(table=definition.table_id.hex(), seat=seat, file=path, n=len(game.envelopes)),
            flush=True,
        )
    player = make_player(options)
    if seat == 0:
        # The host's bot processes (host --bots) play on after a crash of ours; one that
        # died too is started again on its own transcript.
        for number in await restart_bot_processes(options.home, definition):
            if not options.quiet:
                print(
                    _("Bot process {number} was gone: started it again.").format(number=number),
                    flush=True,
                )
    ours = definition.seats[seat].address
    host = definition.seats[0].address
    relay = None
    if options.relay:
        relay = parse_address(options.relay, DEFAULT_RELAY_PORT)
    elif host:
        relay = parse_address(host)
    listeners = []
    if seat < 3 and ours and options.listen:
        # The others know us at the address of the table definition: listen there again.
        _host, port = parse_address(ours)
        listeners = await open_listeners(options.bind, port)
    port_service = HostPort() if seat == 0 and listeners else None
    # A relay of the table's own (--relay): our seat offers the table to watchers there too.
    feeds = relay if options.relay else None

    def say(text: str) -> None:
        if not options.quiet:
            print_line(text)

    hub = None
    if port_service is not None:
        watch = watch and definition.watchers  # the table's rule, which every seat signed
        hub = host_watchers(port_service, definition.table_id, watch)
        hub.open(definition, definition.propose(identity))
        invitation = Invitation.of(
            definition.table_id, identity.public_key_bytes, (ours,), options.relay
        )
        say_watch_code(invitation, watch, say)
    proposal = recorded_proposal(game.envelopes, identity.public_key_bytes)
    failed: PeerError | SecretStoreError | None = None
    result = None
    async with trio.open_nursery() as nursery:
        if port_service is not None:
            # The host's port: its mesh, the relay the others may use, and the watchers.
            await nursery.start(port_service.serve, listeners)
            listeners = []
        if hub is not None:
            offer_feed(nursery, hub, feeds, identity, seat)

        async def play(on_step: Callable[[Sequence[Envelope]], None] | None) -> PeerResult:
            return await play_seat(
                definition, seat, identity, player, listeners, options, transcript=path,
                relay=relay,
                on_mesh=None if port_service is None
                else lambda mesh: port_service.set_mesh(mesh.incoming),
                on_step=on_step,
            )  # fmt: skip

        try:
            if hub is not None:
                result = await play(hub.publish)
            else:
                result = await play_watched(
                    play, definition, proposal, seat, identity, feeds, watch, say
                )
        except (PeerError, SecretStoreError) as exc:
            # Caught here, not wrapped in the nursery's exception group: said in one line.
            failed = exc
        if hub is not None:
            hub.finish(watch_end(result))
            await drain_watchers(hub, say)
        nursery.cancel_scope.cancel()
    if failed is not None or result is None:
        print(error_text(failed), file=sys.stderr, flush=True)
        return 1
    return exit_status(result)


def cmd_resume(args: argparse.Namespace) -> int:
    try:
        options = seat_options(args)
    except Exception as exc:
        print(error_text(exc), file=sys.stderr)
        return 2
    path = Path(args.transcript) if args.transcript else None
    return run_main(lambda: resume_game(options, path, watch=args.watch))


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    resume = sub.add_parser(
        "resume",
        help=_("go on with a game after a crash"),
        description=_(
            "Resume this identity's unfinished game after a crash or a restart: the table "
            "and seat come from the transcript (by default the one unfinished game in "
            "--home), the peer listens again at its address, reconnects and plays on. Give "
            "the same --home and player (--bot) as before, and --relay if the table used a "
            "relay other than the host's port."
        ),
    )
    resume.add_argument(
        "transcript", nargs="?", metavar=_("TRANSCRIPT"), help=_("the game's transcript file")
    )
    add_seat_arguments(resume, name=False)
    add_watch_argument(resume)
    resume.set_defaults(func=cmd_resume)
