"""The conformance kit: ``belote-p2p verify`` answers every case right, and verifiers that
are wrong are reported case by case."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import pytest
from helpers import ROOT, source_pythonpath

from belote_p2p.app import cli, conformance
from belote_p2p.app.conformance import Answer, judge, parse_verdict
from belote_p2p.protocol.identity import verify
from belote_p2p.protocol.wire import ENVELOPE_LABEL, Envelope, decode, encode

VECTORS = ROOT / "protocol" / "vectors"


def kit(capsys: pytest.CaptureFixture[str], verifier: str, *more: str) -> tuple[int, list[str]]:
    """Run ``belote-p2p conformance``; its exit status and its output lines."""
    status = cli.main(["conformance", "--verifier", verifier, "--vectors", str(VECTORS), *more])
    return status, capsys.readouterr().out.splitlines()


def script(tmp_path: Path, name: str, text: str) -> str:
    """A verifier command: ``text`` as a Python script run by this interpreter."""
    path = tmp_path / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(path))}"


def answer(tmp_path: Path, name: str, line: str, status: int = 0) -> str:
    """A verifier command that answers every case alike: ``line``, exit ``status`` (a shell
    script: the kit runs it once per case, hundreds of times, and a shell starts in a tenth
    of an interpreter's time)."""
    path = tmp_path / f"{name}.sh"
    path.write_text(f"printf '%s\\n' {shlex.quote(line)}\nexit {status}\n", encoding="utf-8")
    return f"sh {shlex.quote(str(path))}"


def expectations() -> list[tuple[str, str, Answer]]:
    data = json.loads((VECTORS / conformance.MANIFEST).read_text(encoding="utf-8"))
    return [
        (v["file"], case, Answer.from_json(answer))
        for v in data["vectors"]
        for case, answer in v["expected"].items()
    ]


def vector_files() -> list[str]:
    return list(dict.fromkeys(file for file, _, _ in expectations()))


ONE_PROCESS_PER_CASE = "game-abandoned.transcript"
"""The vector whose cases the kit checks as it checks another implementation's verifier by
default, ``CMD FILE`` once per case (its answers hold every exit status: 0, 1 and 2); the
others are checked in batches (``--batch``: ``belote-p2p verify FILE...``), which spares one
interpreter start-up per case and gives the same answers. A batch's process checks each of
the game's proofs once (``once.py``): its tampered copies repeat them byte for byte."""


# One test per vector (every case of each): the suite's workers share the vectors' cases.
@pytest.mark.parametrize("vector", vector_files())
def test_belote_p2p_verify_answers_every_case_right(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, vector: str
) -> None:
    python = shlex.quote(sys.executable)
    if vector == ONE_PROCESS_PER_CASE:
        verifier, how = f"{python} -m belote_p2p verify", ["--jobs", "2"]
    else:
        once = shlex.quote(str(ROOT / "tests" / "once.py"))
        verifier, how = f"{python} {once} verify", ["--jobs", "1", "--batch", "64"]
        # A script finds the package on its path, not in the current folder as ``-m`` does.
        monkeypatch.setenv("PYTHONPATH", source_pythonpath(os.environ.get("PYTHONPATH", "")))
    status, lines = kit(capsys, verifier, *how, "--only", vector)
    total = sum(f == vector for f, _, _ in expectations())
    assert lines[-1] == f"{total} cases: {total} right", "\n".join(lines)
    assert status == 0
    assert len(lines) == total + 1 and all(line.startswith("right  ") for line in lines[:-1])


def test_a_verifier_that_accepts_everything_is_reported(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    verifier = answer(tmp_path, "yes", "OK: team 0 (a and b) wins 0-0 after 1 rounds")
    status, lines = kit(capsys, verifier)
    assert status == 1
    refused = [(f, c) for f, c, a in expectations() if a.status != 0]
    valid = [(f, c) for f, c, a in expectations() if a.status == 0]
    for file, case in refused:
        assert any(line.startswith(f"WRONG  {file} [{case}]: wrongly accepted") for line in lines)
    for file, case in valid:  # accepted, but with the wrong score
        assert any(line.startswith(f"WRONG  {file} [{case}]: wrong verdict") for line in lines)
    assert lines[-1] == (
        f"{len(refused) + len(valid)} cases: 0 right, {len(valid)} wrong verdict, "
        f"{len(refused)} wrongly accepted"
    )
    assert "WRONG  game-classic.transcript [lie-state]: wrongly accepted: expected FAULT by " in (
        "\n".join(lines)
    )


def test_a_batch_verifier_is_read_line_by_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """With ``--batch`` each file's answer is its own line, status first; a file left without
    such a line has no answer; the cases are cut so that every job has work."""
    verifier = script(
        tmp_path,
        "batch",
        "import sys\n"
        "print(len(sys.argv) - 1, file=open(sys.argv[0] + '.runs', 'a'))\n"
        "for f in sys.argv[1:]:\n"
        "    if 'refused-rules' in f:\n"
        "        break  # the last case: the output stops before its line\n"
        "    print('FAULT by seat 1 and no status' if 'swap' in f else '2 not read'\n"
        "          if 'flag-as-int' in f else '1 FAULT by seat 1 (p1): a lie')\n",
    )
    status, lines = kit(capsys, verifier, "--only", "game-fault", "--batch", "5", "--jobs", "2")
    assert status == 1
    total = sum(f == "game-fault.transcript" for f, _, _ in expectations())
    runs = (tmp_path / "batch.py.runs").read_text(encoding="utf-8").split()
    assert sorted(map(int, runs)) == sorted([5] * (total // 5) + [total % 5] * (total % 5 > 0))
    by_case = {line.split("[")[1].split("]")[0]: line for line in lines[:-1]}
    assert by_case["original"].startswith("right  ")
    nothing = "got no verdict (exit -1): no batch line (STATUS VERDICT) for this file: "
    assert by_case["swap"].endswith(nothing + "'FAULT by seat 1 and no status'")
    assert by_case["refused-rules"].endswith(nothing + "''")
    assert "got not a transcript (exit 2): not read" in by_case["flag-as-int"]
    assert len(by_case) == total and lines[-1].startswith(f"{total} cases: ")
    fault = conformance.cases(VECTORS, ["game-fault"])
    assert len(fault) == total
    halves = [(total + 1) // 2, total // 2]  # two jobs, each with half the cases
    assert [len(b) for b in conformance.batches(fault, jobs=2, batch=64)] == halves
    assert [len(b) for b in conformance.batches(fault, jobs=2, batch=1)] == [1] * total


def test_belote_p2p_verify_gives_one_line_per_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``belote-p2p verify FILE...``: each file's status and verdict line, in order, as one
    file alone gives them (a file that is no transcript among them); the highest status."""
    bad = tmp_path / "no.transcript"
    bad.write_bytes(b"not a transcript")
    files = [VECTORS / "game-fault.transcript", bad, VECTORS / "game-revoke.transcript"]
    alone = []
    for path in files:
        status = cli.main(["verify", str(path)])
        out, err = capsys.readouterr()
        alone.append(f"{status} {(out or err).strip()}")
    assert [line[0] for line in alone] == ["1", "2", "0"]
    assert cli.main(["verify", *map(str, files)]) == 2
    assert capsys.readouterr().out.splitlines() == alone
    assert cli.main(["verify", str(files[2]), str(files[2])]) == 0
    assert capsys.readouterr().out.splitlines() == [alone[2]] * 2


def test_a_verifier_that_refuses_everything_is_reported(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    verifier = answer(tmp_path, "no", "INVALID: nothing is valid here", 1)
    status, lines = kit(capsys, verifier)
    assert status == 1
    cases = expectations()
    right = sum(a.kind == "INVALID" for _, _, a in cases)
    refused = sum(a.status == 0 for _, _, a in cases)
    wrong = len(cases) - right - refused
    assert lines[-1] == (
        f"{len(cases)} cases: {right} right, {wrong} wrong verdict, {refused} wrongly refused"
    )
    assert "WRONG  game-abandoned.transcript [original]: wrongly refused" in "\n".join(lines)


def test_a_verifier_that_blames_the_wrong_seat_is_reported(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    verifier = answer(tmp_path, "blame", "FAULT by seat 2 (x): it was him", 1)
    status, lines = kit(capsys, verifier, "--only", "game-fault")
    assert status == 1
    assert lines[0].startswith("WRONG  game-fault.transcript [original]: wrong verdict: ")
    assert "expected FAULT by seat 1 (exit 1), got FAULT by seat 2 (exit 1)" in lines[0]


def test_the_kit_cannot_run_without_a_verifier_or_vectors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status = cli.main([
        "conformance", "--verifier", str(tmp_path / "no-such-verifier"), "--only", "game-fault",
        "--vectors", str(VECTORS),
    ])  # fmt: skip
    assert status == 2
    assert "cannot run the verifier" in capsys.readouterr().err
    empty = tmp_path / "vectors"
    empty.mkdir()
    assert cli.main(["conformance", "--verifier", "true", "--vectors", str(empty)]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_the_kit_refuses_a_manifest_that_does_not_match_its_cases(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    manifest = json.loads((VECTORS / conformance.MANIFEST).read_text(encoding="utf-8"))
    for vector in manifest["vectors"]:
        (tmp_path / vector["file"]).write_bytes((VECTORS / vector["file"]).read_bytes())
    del manifest["vectors"][0]["expected"]["swap"]
    (tmp_path / conformance.MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    assert cli.main(["conformance", "--verifier", "true", "--vectors", str(tmp_path)]) == 2
    assert "out of date" in capsys.readouterr().err


def test_the_kit_keeps_the_files_it_checked(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    verifier = answer(tmp_path, "yes", "INVALID: x")
    kit(capsys, verifier, "--only", "game-abandoned.transcript", "--keep", str(tmp_path / "kept"))
    kept = sorted(p.name for p in (tmp_path / "kept").iterdir())
    assert "game-abandoned.original.transcript" in kept
    assert "game-abandoned.lie-state.transcript" in kept
    original = (tmp_path / "kept" / "game-abandoned.original.transcript").read_bytes()
    assert original == (VECTORS / "game-abandoned.transcript").read_bytes()


# -- the pieces -----------------------------------------------------------------------------


THREE = (36, 116, 232)
GONE = (9, 40, 0)


@pytest.mark.parametrize(
    ("status", "line", "answer"),
    [
        (0, "OK: team 1 (p1 and p3) wins 11-252 after 3 rounds",
         Answer(0, "OK", None, (11, 252), 3)),
        (0, "ABANDONED by seat 3 (p3 [e905]) in round 1 at 0-0",
         Answer(0, "ABANDONED", 3, (0, 0), 1)),
        (1, "FAULT by seat 1 (a (b) wins 1-2 after 3 rounds): equivocation", Answer(1, "FAULT", 1)),
        (1, "INCOMPLETE: the record stops in round 2 at 0-0",
         Answer(1, "INCOMPLETE", None, (0, 0), 2)),
        (1, "INCOMPLETE: the record stops in round 3 at 9-40-0 (the file ends in a cut record)",
         Answer(1, "INCOMPLETE", None, GONE, 3)),
        (0, "ABANDONED by seat 1 (in round 7 at 1-1) in round 2 at 5-6",
         Answer(0, "ABANDONED", 1, (5, 6), 2)),
        (1, "INVALID: record 3 is not a valid envelope", Answer(1, "INVALID")),
        (1, "NO GAME: the seats did not sign the same table (x)", Answer(1, "NO GAME")),
        (0, "OK: seat 2 (p2 [99d4]) wins 36-116-232 after 3 rounds",
         Answer(0, "OK", None, THREE, 3)),
        (0, "OK: seat 1 (p1 [5d]) wins 256-412 after 4 rounds",
         Answer(0, "OK", None, (256, 412), 4)),
        (0, "ABANDONED by seat 2 (p2 [e9]) in round 3 at 9-40-0",
         Answer(0, "ABANDONED", 2, GONE, 3)),
        (0, "OK: seat 2 (p2) wins 36 after 3 rounds", Answer(0, "OK")),
        (1, "OKAY then", Answer(1)),
        (1, "", Answer(1)),
        (2, "OK: whatever", Answer(2)),
    ],
)  # fmt: skip
def test_a_verdict_line_is_read_by_its_first_words(status: int, line: str, answer: Answer) -> None:
    assert parse_verdict(status, line) == answer


def test_a_verifier_that_reads_two_scores_of_three_is_reported(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A three-handed game's verdict names three scores: two of them are a wrong verdict."""
    verifier = answer(tmp_path, "two", "OK: seat 2 (p2) wins 137-28 after 3 rounds")
    status, lines = kit(capsys, verifier, "--only", "game-three-handed")
    assert status == 1
    original = next(line for line in lines if "[original]" in line)
    assert original.startswith("WRONG  game-three-handed.transcript [original]: wrong verdict")
    expected, got = "OK after 3 rounds at 137-28-218 (exit 0)", "OK after 3 rounds at 137-28"
    assert f"expected {expected}, got {got} (exit 0)" in original


def test_what_counts_as_wrong() -> None:
    ok = Answer(0, "OK", None, (10, 20), 2)
    fault = Answer(1, "FAULT", 2)
    assert judge(ok, ok) is None and judge(fault, fault) is None
    assert judge(ok, Answer(0, "OK", None, (10, 20), 3)) == "wrong verdict"  # the rounds
    stood = Answer(1, "INCOMPLETE", None, (10, 20), 2)
    assert judge(stood, Answer(1, "INCOMPLETE", None, (10, 0), 2)) == "wrong verdict"
    assert judge(ok, fault) == "wrongly refused"
    assert judge(fault, ok) == "wrongly accepted"
    assert judge(fault, Answer(1, "FAULT", 3)) == "wrong verdict"
    assert judge(ok, Answer(0, "OK", None, (20, 10))) == "wrong verdict"
    assert judge(Answer(1, "INVALID"), Answer(2)) == "wrong verdict"


def records(data: bytes) -> list[Envelope]:
    return [Envelope.decode(f) for f in conformance.split_frames(data)[1:]]


def test_every_tampered_copy_differs_and_lies_are_validly_signed() -> None:
    manifest = json.loads((VECTORS / conformance.MANIFEST).read_text(encoding="utf-8"))
    every: set[str] = set()  # each tamper applies to some game
    for vector in manifest["vectors"]:
        every |= set(vector["expected"])
    assert every == {"original", *conformance.TAMPERS}
    entry = manifest["vectors"][0]
    data = (VECTORS / entry["file"]).read_bytes()
    made = conformance.copies(data, [bytes.fromhex(k) for k in entry["keys"]])
    assert set(made) == set(entry["expected"])
    assert len({d for d in made.values()}) == len(made)
    original = records(data)
    for name, kind in (("lie-state", "bid"), ("lie-score", "done"), ("unclaim-belote", "play")):
        lie = records(made[name])
        assert len(lie) == len(original)
        changed = [i for i, (a, b) in enumerate(zip(original, lie, strict=True)) if a != b]
        assert kind in {lie[i].type for i in changed}
        for i in changed:  # the lie, and every record that names a changed one, signed again
            unsigned = {k: v for k, v in decode(lie[i].raw).items() if k != "sig"}
            assert verify(lie[i].sender, lie[i].sig, ENVELOPE_LABEL + encode(unsigned))
        gone = {original[i].hash for i in changed}  # nothing names a replaced record
        assert not any(h in gone for e in lie for h in (e.prev, *e.seen))
    swapped = records(made["swap"])
    assert sorted(e.hash for e in swapped) == sorted(e.hash for e in original)
    for sender in {e.sender for e in original}:
        assert [e.seq for e in swapped if e.sender == sender] == sorted(
            e.seq for e in original if e.sender == sender
        )
    assert len(records(made["drop"])) == len(original) - 1
    assert records(made["duplicate"])[-1] == next(e for e in original if e.type == "deck")


def test_frames_split_and_join_back() -> None:
    data = (VECTORS / "game-fault.transcript").read_bytes()
    assert conformance.join_frames(conformance.split_frames(data)) == data
    with pytest.raises(conformance.ConformanceError):
        conformance.split_frames(data[:-1])
    with pytest.raises(conformance.ConformanceError):
        conformance.split_frames(b"")
