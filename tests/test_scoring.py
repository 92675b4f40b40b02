"""RULES.md §6, §7, §9 and §10: round scores."""

from __future__ import annotations

from belote_p2p.game.scoring import Outcome, score_round

EIGHT_SPLIT = (0, 1, 0, 1, 2, 3, 2, 1)


def classic(
    points: tuple[int, int],
    taker: int = 0,
    ann: tuple[int, int] = (0, 0),
    belote: tuple[int, int] = (0, 0),
    winners: tuple[int, ...] = EIGHT_SPLIT,
    pending: int = 0,
    offender: int | None = None,
):  # type: ignore[no-untyped-def]
    return score_round(
        coinche=False,
        taker=taker,
        contract=0,
        multiplier=1,
        trick_points=points,
        trick_winners=winners,
        announcements=ann,
        belote=belote,
        pending=pending,
        offender=offender,
    )


def coinche(
    points: tuple[int, int],
    contract: int,
    multiplier: int = 1,
    taker: int = 0,
    ann: tuple[int, int] = (0, 0),
    belote: tuple[int, int] = (0, 0),
    winners: tuple[int, ...] = EIGHT_SPLIT,
    offender: int | None = None,
):  # type: ignore[no-untyped-def]
    return score_round(
        coinche=True,
        taker=taker,
        contract=contract,
        multiplier=multiplier,
        trick_points=points,
        trick_winners=winners,
        announcements=ann,
        belote=belote,
        pending=0,
        offender=offender,
    )


def test_made_each_team_scores_its_own() -> None:
    r = classic((100, 62), ann=(20, 0), belote=(0, 20))
    assert r.outcome is Outcome.MADE
    assert r.totals == (120, 82) and r.score == (120, 82)


def test_failed_defence_takes_162_and_all_announcements_belote_stays() -> None:
    r = classic((70, 92), ann=(50, 0), belote=(20, 0), taker=1)
    # Taker team 1: 92 < 70 + 50 + 20.
    assert r.outcome is Outcome.FAILED
    assert r.score == (162 + 50 + 20, 0)
    r = classic((60, 102), ann=(0, 0), belote=(20, 0), taker=0)
    assert r.outcome is Outcome.FAILED and r.score == (20, 162)


def test_capot_and_generale() -> None:
    r = classic((162, 0), winners=(0, 2, 0, 2, 0, 2, 0, 2))
    assert r.capot == 0 and r.generale is None and r.card_points == (250, 0)
    assert r.score == (250, 0)
    r = classic((162, 0), winners=(2,) * 8)
    assert r.generale == 2 and r.card_points == (500, 0) and r.score == (500, 0)
    # A capot by the defence fails the contract with 250.
    r = classic((0, 162), taker=0, winners=(1, 3) * 4, ann=(20, 0))
    assert r.outcome is Outcome.FAILED and r.score == (0, 250 + 20)


def test_litige_sets_the_takers_points_aside_and_next_winner_takes_the_pot() -> None:
    r = classic((81, 81), taker=0)
    assert r.outcome is Outcome.LITIGE and r.score == (0, 81) and r.pending == 81
    r = classic((61, 81), taker=0, belote=(20, 0))
    assert r.outcome is Outcome.LITIGE and r.score == (20, 81) and r.pending == 61
    # Another litige adds to the pot; then the winner of the next round takes it.
    r2 = classic((81, 81), taker=1, pending=61)
    assert r2.pending == 61 + 81 and r2.score == (81, 0)
    r3 = classic((100, 62), taker=1, pending=142)
    assert r3.outcome is Outcome.FAILED and r3.score == (162 + 142, 0) and r3.pending == 0
    r4 = classic((100, 62), taker=0, pending=142)
    assert r4.outcome is Outcome.MADE and r4.score == (242, 62) and r4.pending == 0


def test_coinche_made_and_failed() -> None:
    r = coinche((110, 52), 100)
    assert r.outcome is Outcome.MADE and r.score == (100 + 110, 52)
    r = coinche((90, 72), 100, belote=(0, 20))
    assert r.outcome is Outcome.FAILED and r.score == (0, 160 + 100 + 20)
    # Reaching the bid is not enough without beating the defence.
    r = coinche((81, 81), 80)
    assert r.outcome is Outcome.FAILED  # no litige in coinche


def test_coinche_doubled() -> None:
    r = coinche((110, 52), 100, multiplier=2, ann=(20, 0), belote=(0, 20))
    assert r.outcome is Outcome.MADE and r.score == (160 + 200 + 20, 20)
    r = coinche((60, 102), 100, multiplier=4, belote=(20, 0))
    assert r.outcome is Outcome.FAILED and r.score == (20, 160 + 400)


def test_coinche_capot_and_generale_bids() -> None:
    r = coinche((162, 0), 250, winners=(0, 2) * 4)
    assert r.outcome is Outcome.MADE and r.score == (250 + 250, 0)
    r = coinche((152, 10), 250, winners=(0, 2, 0, 2, 0, 2, 0, 1))
    assert r.outcome is Outcome.FAILED and r.score == (0, 160 + 250)
    r = coinche((162, 0), 500, winners=(0, 2) * 4)
    assert r.outcome is Outcome.FAILED  # générale needs the bidder alone
    r = coinche((162, 0), 500, winners=(0,) * 8)
    assert r.outcome is Outcome.MADE and r.score == (500 + 500, 0)


def test_revoke_after_the_fact() -> None:
    # Takers at fault: the contract fails whatever the cards said.
    r = classic((120, 42), taker=0, ann=(20, 0), belote=(20, 0), offender=0)
    assert r.outcome is Outcome.FAILED and r.score == (20, 162 + 20)
    # Defence at fault: takers score 162 plus all announcements.
    r = classic((40, 122), taker=0, ann=(0, 50), belote=(0, 20), offender=1)
    assert r.outcome is Outcome.MADE and r.score == (162 + 50, 20)
    r = coinche((40, 122), 100, multiplier=2, offender=1)
    assert r.score == (160 + 200, 0)
