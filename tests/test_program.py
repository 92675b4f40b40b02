"""Bots in any language (``protocol/BOTS.md``): the exchange vector, the example programs in
Python, JavaScript and C, and programs that crash, hang, lie or write garbage.

    PYTHONPATH=. python tests/test_program.py --write    # regenerate the vector

Regenerate only after a deliberate change to the bot protocol, and say so in the commit.
"""

from __future__ import annotations

import json
import os
import random
import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers import run_cli

from belote_p2p.app.cli import main
from belote_p2p.app.host import bots_option
from belote_p2p.app.output import parse_result
from belote_p2p.game.cards import CARDS
from belote_p2p.game.engine import BIDS, CHOOSE, COINCHE, PASS, SURCOINCHE, TAKE, Phase, State
from belote_p2p.game.observation import observe
from belote_p2p.game.rules import CLASSIC, rule_set
from belote_p2p.game.rules import COINCHE as COINCHE_RULES
from belote_p2p.players import program
from belote_p2p.players.arena import play_table, run_match
from belote_p2p.players.bots import BotError, call_bot, make_bot, parse_spec, split_specs
from belote_p2p.players.program import (
    ProgramBot,
    ProgramCrashed,
    ProgramGarbage,
    ProgramIllegal,
    ProgramTimedOut,
    action_word,
    exchange_vector,
    parse_action_word,
    vector_table,
)

ROOT = Path(__file__).resolve().parent.parent
VECTOR = ROOT / "protocol" / "vectors" / "bots-exchange.jsonl"
EXAMPLES = ROOT / "examples" / "bots"
PYTHON = shlex.quote(sys.executable)


def exec_spec(command: str, **options: object) -> str:
    """An ``exec`` bot spec for ``command``, quoted so that it may hold ``:`` and ``,``."""
    extra = "".join(f":{k}={v}" for k, v in options.items())
    return f"exec:cmd={json.dumps(command)}{extra}"


def lines_of(side: str) -> bytes:
    out = []
    for text in VECTOR.read_text().splitlines():
        entry = json.loads(text)
        if entry["from"] == side:
            out.append(program.encode(entry["line"]))
    return b"".join(out)


# -- the words and the vector ------------------------------------------------------------


def test_every_action_word_reads_back() -> None:
    actions = [*CARDS, PASS, TAKE, COINCHE, SURCOINCHE, *CHOOSE, *BIDS.values()]
    words = [action_word(a) for a in actions]
    assert len(set(words)) == len(words)
    assert [parse_action_word(w) for w in words] == actions
    assert action_word(CARDS[12]) == "play JH" and action_word(BIDS[80, 1]) == "bid 80 H"
    assert action_word(BIDS[250, 0]) == "bid capot S" and action_word(CHOOSE[2]) == "choose D"
    for bad in ("JS", "play", "play XX", "bid 85 H", "bid H", "pass now", "choose", ""):
        with pytest.raises(ValueError):
            parse_action_word(bad)


def test_the_exchange_vector_is_what_the_code_writes() -> None:
    text = VECTOR.read_text()
    assert text == exchange_vector()
    for line in text.splitlines():  # every line is one compact JSON object, ASCII only
        entry = json.loads(line)
        assert program.encode(entry).decode() == line + "\n"
        assert line.isascii()
    kinds = [(e["from"], e["line"]["type"]) for e in map(json.loads, text.splitlines())]
    assert kinds[:3] == [("table", "hello"), ("program", "hello"), ("table", "new_game")]
    assert kinds[-1] == ("table", "quit")
    assert ("table", "decide") in kinds and ("program", "action") in kinds


def test_a_program_bot_sends_the_vector_byte_for_byte(tmp_path: Path) -> None:
    """A real program seated with ProgramBot receives exactly the vector's table lines."""
    log = tmp_path / "input.log"
    script = tmp_path / "recorder.py"
    hello = json.dumps(program.VECTOR_HELLO, separators=(",", ":"))
    script.write_text(
        textwrap.dedent(f"""
        import json, sys
        with open({str(log)!r}, "w") as log:
            for line in sys.stdin:
                log.write(line)
                log.flush()
                message = json.loads(line)
                if message["type"] == "hello":
                    print({hello!r}, flush=True)
                elif message["type"] == "decide":
                    legal = message["observation"]["legal"]
                    answer = {{"type": "action", "id": message["id"], "action": legal[0]}}
                    print(json.dumps(answer, separators=(",", ":")), flush=True)
                elif message["type"] == "quit":
                    break
        """)
    )
    bot = ProgramBot(f"{PYTHON} {shlex.quote(str(script))}")
    rules, players, rngs, dealer, next_deck = vector_table(bot)
    play_table(rules, players, rngs, dealer, next_deck)
    assert players[0].counts.fallbacks == 0 and players[0].counts.decisions > 0
    held = program._take_idle(bot._key)  # the table closed the bot: its program is idle
    assert held is not None
    held.stop(polite=True)  # says quit, as the vector's last line
    assert log.read_bytes() == lines_of("table")


def test_the_c_example_answers_the_vector(c_example: Path | None) -> None:
    if c_example is None:
        pytest.skip("no C compiler (cc, gcc) on this machine")
    answers = subprocess.run([c_example], input=lines_of("table"), capture_output=True,
                             timeout=30)  # fmt: skip
    assert answers.stdout == lines_of("program")


@pytest.fixture(scope="module")
def c_example(tmp_path_factory: pytest.TempPathFactory) -> Path | None:
    """The C example compiled into a temporary folder; None without a compiler."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None
    out = tmp_path_factory.mktemp("c-bot") / "first_legal"
    subprocess.run([cc, "-O2", "-o", str(out), str(EXAMPLES / "first_legal.c")], check=True)
    return out


@pytest.mark.parametrize("variant", ["classic", "coinche", "three-handed", "two-handed"])
def test_the_observation_is_every_field_bots_md_documents(variant: str) -> None:
    text = (ROOT / "protocol" / "BOTS.md").read_text()
    section = text[text.index("## The observation") : text.index("## When a program fails")]
    documented = [line.split("`")[1] for line in section.splitlines() if line.startswith("| `")]
    rules = rule_set(variant)
    state = State.new_game(rules)
    deck = list(rules.deck_cards)
    random.Random(4).shuffle(deck)
    state = state.deal(deck)
    for _ in range(12):  # into the play, with a trick on the table
        if state.phase is Phase.DEAL or state.phase is Phase.GAME_OVER:
            break
        legal = state.legal_actions()
        state = state.apply(TAKE if TAKE in legal else BIDS[80, 1] if BIDS[80, 1] in legal
                            else PASS if PASS in legal else legal[0])  # fmt: skip
    obs = observe(state, state.to_act)
    data = program.observation_json(obs)
    assert list(data) == documented
    assert data["hand"] == [str(c) for c in obs.hand] and data["seats"] == rules.seats
    assert [parse_action_word(w) for w in data["legal"]] == list(obs.legal)
    assert len(data["voids"]) == len(data["shown"]) == len(data["declared"]) == rules.seats
    assert data["trump"] in ("S", "H", "D", "C", "NT", "AT")
    assert (data["open_deck"] != []) == (variant == "two-handed")
    json.dumps(data).encode("ascii")


# -- the example programs ----------------------------------------------------------------


def example_command(name: str, c_example: Path | None = None) -> str:
    if name == "python":
        return f"{PYTHON} {shlex.quote(str(EXAMPLES / 'heuristic.py'))}"
    if name == "node":
        node = shutil.which("node")
        if node is None:
            pytest.skip("node is not installed: the JavaScript example cannot run")
        return f"{shlex.quote(node)} {shlex.quote(str(EXAMPLES / 'random.js'))}"
    if c_example is None:
        pytest.skip("no C compiler (cc, gcc): the C example cannot be built")
    return shlex.quote(str(c_example))


@pytest.mark.parametrize("name", ["python", "node", "c"])
@pytest.mark.parametrize("variant", ["classic", "coinche"])
def test_each_example_plays_20_boards_without_an_illegal_action(
    name: str, variant: str, c_example: Path | None
) -> None:
    spec = exec_spec(example_command(name, c_example))
    match = run_match((spec, "rules"), boards=20, variant=variant, seed=3, jobs=1)
    counts = match.fallbacks[0]
    assert len(match.boards) == 20
    assert counts.decisions > 20 * 20
    assert (counts.illegal, counts.errors, counts.timeouts) == (0, 0, 0)


def test_a_program_declares_its_options() -> None:
    command = example_command("python")
    first = make_bot(exec_spec(command, style="first"))
    assert isinstance(first, ProgramBot) and first.name == "heuristic-py"
    state = State.new_game(CLASSIC).deal(list(CARDS))
    seat = state.to_act
    first.new_game(CLASSIC, seat)
    obs = observe(state, seat)
    assert first.decide(obs, random.Random(1), deadline_s=10) == obs.legal[0]
    with pytest.raises(ProgramGarbage, match="has no option depth"):
        make_bot(exec_spec(command, depth=3))


@pytest.mark.skipif(os.name != "posix", reason="process groups are POSIX")
def test_a_program_runs_in_a_process_group_of_its_own() -> None:
    bot = make_bot(exec_spec(example_command("python")))
    assert isinstance(bot, ProgramBot)
    program = bot._holder[0]
    assert program is not None
    # Ctrl-C at the terminal reaches the table's group, not the program's: the table ends it.
    assert os.getpgid(program.process.pid) == program.process.pid != os.getpgid(0)


def test_specs_cut_at_commas_and_colons_outside_quotes() -> None:
    text = "exec:cmd='node bot.js --a=1:2,3',rules,pimc:iterations=4"
    assert split_specs(text) == ["exec:cmd='node bot.js --a=1:2,3'", "rules", "pimc:iterations=4"]
    assert parse_spec(split_specs(text)[0]) == ("exec", {"cmd": "node bot.js --a=1:2,3"})
    assert parse_spec('exec:cmd="7":n=7') == ("exec", {"cmd": "7", "n": 7})
    assert bots_option("3:exec:cmd='./bot --a=1:2'") == (3, "exec:cmd='./bot --a=1:2'")
    with pytest.raises(BotError, match="unclosed quote"):
        split_specs("exec:cmd='node")
    with pytest.raises(ProgramCrashed, match="could not be started"):
        make_bot("exec:cmd=/nonexistent/bot-program")
    with pytest.raises(ProgramCrashed, match="no command"):
        make_bot("exec:cmd=''")


# -- programs that fail ------------------------------------------------------------------

MISBEHAVING = {
    "crash": "sys.exit(3)",
    "hang": "threading.Event().wait()",
    "lie": "answer(next(w for w in WORDS if w not in obs['legal']))",
    "garbage": "print('thinking... ' + obs['legal'][0], flush=True)",
}
"""What each program does at a decision (the others answer the first legal action)."""

TEMPLATE = """
import json, sys, threading
WORDS = ["play 7S", "play 8S", "play 9S", "pass", "bid 80 S", "bid 90 S"]
def answer(word):
    print(json.dumps({{"type": "action", "id": message["id"], "action": word}}), flush=True)
decisions = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({{"type": "hello", "protocol": 1, "name": "{name}"}}), flush=True)
    elif message["type"] == "decide":
        obs = message["observation"]
        decisions += 1
        if decisions % 3 == 0:
            {action}
        else:
            answer(obs["legal"][0])
"""


def misbehaving(tmp_path: Path, how: str) -> str:
    """The command of a program that misbehaves at every third decision as ``how`` says."""
    path = tmp_path / f"{how}.py"
    path.write_text(TEMPLATE.format(name=how, action=MISBEHAVING[how]))
    return f"{PYTHON} {shlex.quote(str(path))}"


@pytest.mark.parametrize(
    ("how", "error", "cause"),
    [
        ("crash", ProgramCrashed, "errors"),
        ("hang", ProgramTimedOut, "timeouts"),
        ("lie", ProgramIllegal, "illegal"),
        ("garbage", ProgramGarbage, "errors"),
    ],
)
def test_a_failing_program_gets_a_typed_error_and_the_match_ends(
    tmp_path: Path, how: str, error: type[Exception], cause: str
) -> None:
    command = misbehaving(tmp_path, how)
    bot = ProgramBot(command, restarts=1)
    state = State.new_game(COINCHE_RULES).deal(list(CARDS))
    seat = state.to_act
    bot.new_game(COINCHE_RULES, seat)
    obs = observe(state, seat)
    rng = random.Random(2)
    assert bot.decide(obs, rng, deadline_s=5) in obs.legal
    assert bot.decide(obs, rng, deadline_s=5) in obs.legal
    with pytest.raises(error):
        bot.decide(obs, rng, deadline_s=0.3)
    # The stand-in plays instead, counted by cause; the program is started again once, and
    # then no more.
    match = run_match((exec_spec(command, restarts=1), "random"), boards=1, variant="coinche",
                      seed=1, jobs=1, deadline=0.2)  # fmt: skip
    assert len(match.boards) == 1
    counts = match.fallbacks[0].to_json()
    assert counts[cause] > 0
    assert counts["decisions"] > 20
    if how != "lie":  # a program that lies goes on; one that failed is stopped for good
        again = ProgramBot(command, restarts=0)
        again.new_game(COINCHE_RULES, seat)
        for _ in range(2):
            again.decide(obs, rng, deadline_s=5)
        with pytest.raises(error):
            again.decide(obs, rng, deadline_s=0.3)
        with pytest.raises(ProgramCrashed, match="stopped for good"):
            again.decide(obs, rng, deadline_s=0.3)


def test_call_bot_plays_the_stand_in_on_a_program_failure(tmp_path: Path) -> None:
    bot = ProgramBot(misbehaving(tmp_path, "hang"), restarts=1)
    state = State.new_game(CLASSIC).deal(list(CARDS))
    obs = observe(state, state.to_act)
    rng = random.Random(5)
    answers = [call_bot(bot, obs, rng, 0.3) for _ in range(3)]
    assert all(a in obs.legal for a in answers)


def test_the_arena_command_counts_a_program_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = exec_spec(misbehaving(tmp_path, "garbage"))
    argv = ["arena", "--bots", f"{spec},rules", "--boards", "2", "--jobs", "1", "--json"]
    assert main([*argv, "--no-progress", "--bot-deadline", "5"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["fallbacks"][split_specs(spec)[0]]["errors"] > 0


async def test_a_live_table_of_exec_bots_ends_and_names_their_failures(tmp_path: Path) -> None:
    """Four peer processes over TCP on 127.0.0.1, each seat a program that lies at every
    third decision: the game ends, the peers agree, and each bot's failures are told."""
    spec = exec_spec(misbehaving(tmp_path, "lie"))
    done = await run_cli(tmp_path, "demo", "--target", "1", "--bot", spec, "--seed", "3",
                         "--home", str(tmp_path / "home"), timeout=120)  # fmt: skip
    out = done.stdout.decode()
    assert done.returncode == 0, out + done.stderr.decode()
    result = parse_result(out)
    assert result is not None and result["ok"] and result["fallbacks"]["illegal"] > 0
    assert "Bot fallbacks: " in out and "Bot process 3: " in out and "All 4 peers agree" in out


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        VECTOR.write_text(exchange_vector())
        print(f"wrote {VECTOR}")
    else:
        print(__doc__)
