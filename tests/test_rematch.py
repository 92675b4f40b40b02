"""Another game with the same players (:mod:`belote_p2p.net.rematch`), over loopback TCP:
the host proposes the same table with the deal passed on only if every seat wants it (four,
three or two), and a joiner signs nothing else."""

from __future__ import annotations

from dataclasses import replace

import pytest
import trio
from helpers import LOOPBACK, address_of, make_table, open_listeners

from belote_p2p.net.lobby import JoinRefused, LobbyAnswer, LobbyError
from belote_p2p.net.rematch import (
    NoRematch,
    RematchAnswer,
    check_rematch,
    host_rematch,
    join_rematch,
    parse_again,
    passed_on,
)
from belote_p2p.protocol.identity import Identity
from belote_p2p.protocol.table import TableDefinition

OLD, IDS = make_table("coinche", target=301)


async def rematch(
    wants: tuple[bool, ...],
    ports: tuple[int, ...],
    old: TableDefinition = OLD,
    ids: list[Identity] = IDS,
) -> tuple[object, dict[int, object], list[RematchAnswer]]:
    """The host's outcome (its table and proposal, or its NoRematch) and each joiner's, at
    ``old`` (its seats: four, three or two)."""
    (listener,) = await open_listeners(1)
    port = address_of(listener)[1]
    heard: list[RematchAnswer] = []
    joined: dict[int, object] = {}
    hosted: list[object] = []

    async def ours() -> bool:
        return wants[0]

    async def host() -> None:
        try:
            hosted.append(
                await host_rematch(old, ids[0], [listener], 5000, ours, on_answer=heard.append)
            )
        except NoRematch as exc:
            hosted.append(exc)

    async def join(seat: int) -> None:
        try:
            joined[seat] = await join_rematch(
                LOOPBACK, port, old, ids[seat], ports[seat - 1], wants[seat], dial_for=5
            )
        except NoRematch as exc:
            joined[seat] = exc

    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(host)
            for seat in range(1, len(old.seats)):
                nursery.start_soon(join, seat)
    return hosted[0], joined, heard


async def test_all_four_want_it_the_same_table_with_the_next_dealer() -> None:
    # Seat 2 accepts no connection (--no-listen): port 0, no address.
    hosted, joined, heard = await rematch((True, True, True, True), (6001, 0, 6003))
    assert isinstance(hosted, tuple)
    definition, proposal = hosted
    assert isinstance(definition, TableDefinition) and definition.proposed_by_host(proposal)
    assert definition.table_id != OLD.table_id
    assert definition.rules == OLD.rules.with_(first_dealer=(OLD.rules.first_dealer + 1) % 4)
    assert [(s.name, s.key) for s in definition.seats] == [(s.name, s.key) for s in OLD.seats]
    addresses = [s.address for s in definition.seats]
    assert addresses == [f"{LOOPBACK}:5000", f"{LOOPBACK}:6001", "", f"{LOOPBACK}:6003"]
    for seat in (1, 2, 3):
        answer = joined[seat]
        assert isinstance(answer, LobbyAnswer)
        assert (answer.definition, answer.seat, answer.proposal) == (definition, seat, proposal)
    assert sorted((a.seat, a.again) for a in heard) == [(s, True) for s in range(4)]


async def test_one_says_no_and_everyone_hears_who() -> None:
    hosted, joined, _ = await rematch((True, True, False, True), (6001, 6002, 6003))
    assert isinstance(hosted, NoRematch) and "p2 does not want to play again" in str(hosted)
    for seat in (1, 3):
        assert isinstance(joined[seat], NoRematch)
        assert "p2 does not want to play again" in str(joined[seat])


async def test_a_host_that_offers_nothing_is_said_in_words() -> None:
    (listener,) = await open_listeners(1)
    port = address_of(listener)[1]
    await listener.aclose()  # nobody gathers answers there
    with trio.fail_after(10), pytest.raises(NoRematch, match="offers no other game"):
        await join_rematch(LOOPBACK, port, OLD, IDS[1], 6001, True, dial_for=1)


def test_a_joiner_signs_only_the_same_table_with_the_deal_passed_on() -> None:
    passed_on = OLD.rules.with_(first_dealer=(OLD.rules.first_dealer + 1) % 4)
    good = replace(OLD, table_id=bytes(16), rules=passed_on)
    check_rematch(OLD, good)
    with pytest.raises(LobbyError, match="old table id"):
        check_rematch(OLD, replace(good, table_id=OLD.table_id))
    with pytest.raises(LobbyError, match="changes the rules"):
        check_rematch(OLD, replace(good, rules=passed_on.with_(target=1001)))
    with pytest.raises(LobbyError, match="changes the rules"):
        check_rematch(OLD, replace(good, rules=OLD.rules))  # the same dealer again
    seats = list(good.seats)
    seats[1], seats[3] = seats[3], seats[1]
    with pytest.raises(LobbyError, match="players or their seats"):
        check_rematch(OLD, replace(good, seats=tuple(seats)))


def test_the_host_hears_only_the_players_of_the_table() -> None:
    from belote_p2p.net.rematch import again_message

    key = IDS[3].public_key_bytes
    assert parse_again(again_message(OLD, key, 6003, True), OLD) == (3, 6003, True)
    stranger = make_table("coinche", seed=9)[1][1].public_key_bytes
    with pytest.raises(JoinRefused, match="did not play at this table"):
        parse_again(again_message(OLD, stranger, 6003, True), OLD)
    with pytest.raises(JoinRefused, match="did not play at this table"):
        parse_again(again_message(OLD, IDS[0].public_key_bytes, 6000, True), OLD)  # the host's
    other = replace(OLD, table_id=bytes(16))
    with pytest.raises(JoinRefused, match="not a rematch answer"):
        parse_again(again_message(other, key, 6003, True), OLD)


@pytest.mark.parametrize("variant", ["three-handed", "two-handed"])
async def test_a_rematch_at_three_and_at_two_seats(variant: str) -> None:
    old, ids = make_table(variant, target=301)
    seats = len(old.seats)
    ports = tuple(6001 + s for s in range(seats - 1))
    hosted, joined, heard = await rematch((True,) * seats, ports, old, ids)
    assert isinstance(hosted, tuple)
    definition, proposal = hosted
    assert definition.proposed_by_host(proposal)
    # The deal passes to the next of the table's seats, the last one's back to seat 0.
    assert definition.rules.first_dealer == (old.rules.first_dealer + 1) % seats
    check_rematch(old, definition)
    joiners = [f"{LOOPBACK}:{6000 + s}" for s in range(1, seats)]
    assert [s.address for s in definition.seats] == [f"{LOOPBACK}:5000", *joiners]
    for seat in range(1, seats):
        answer = joined[seat]
        assert isinstance(answer, LobbyAnswer) and answer.definition == definition
    assert sorted(a.seat for a in heard) == list(range(seats))
    last = replace(old, rules=old.rules.with_(first_dealer=seats - 1))
    assert passed_on(last).first_dealer == 0
    # One says no: everyone hears who, and nobody waits for a fourth seat.
    hosted, joined, _ = await rematch((True,) * (seats - 1) + (False,), ports, old, ids)
    name = old.seats[seats - 1].name
    assert isinstance(hosted, NoRematch) and f"{name} does not want to play again" in str(hosted)
    for seat in range(1, seats - 1):
        assert isinstance(joined[seat], NoRematch)


async def test_an_answer_in_another_players_name_counts_for_nothing() -> None:
    """A stranger who knows seat 2's key says no in its name (and would move its address):
    its signature does not prove the key, the host refuses it, and seat 2's own answer
    holds."""
    from belote_p2p.net.lobby import MAX_LOBBY_FRAME, parse_challenge
    from belote_p2p.net.rematch import again_message, prove_again
    from belote_p2p.net.transport import FramedStream

    (listener,) = await open_listeners(1)
    port = address_of(listener)[1]
    stranger = make_table("coinche", seed=9)[1][1]
    joined: dict[int, LobbyAnswer] = {}
    hosted: list[tuple[TableDefinition, bytes]] = []

    async def yes() -> bool:
        return True

    async def host() -> None:
        hosted.append(await host_rematch(OLD, IDS[0], [listener], 5000, yes))

    async def forge() -> bytes:
        message = again_message(OLD, IDS[2].public_key_bytes, 6666, False)
        async with FramedStream(
            await trio.open_tcp_stream(LOOPBACK, port), max_frame=MAX_LOBBY_FRAME
        ) as conn:
            await conn.send(message)
            await conn.send(prove_again(stranger, message, parse_challenge(await conn.receive())))
            return await conn.receive()

    async def join(seat: int) -> None:
        joined[seat] = await join_rematch(LOOPBACK, port, OLD, IDS[seat], 6000 + seat, True)

    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(host)
            with pytest.raises(JoinRefused, match="not signed by the key it names"):
                parse_challenge(await forge())  # the host's error, in the challenge's place
            for seat in (1, 2, 3):
                nursery.start_soon(join, seat)
    definition, _ = hosted[0]
    assert definition.seats[2].address == f"{LOOPBACK}:6002"
    assert all(joined[s].definition == definition for s in (1, 2, 3))
