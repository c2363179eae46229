"""The results store: round files, the TinyDB index, queries, overrides, tournaments (in one process)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from tinydb import TinyDB

from ebtui.core.records import CRITERIA, Round, RoundStatus, Tournament
from ebtui.core.store import ResultsStore, StoreError, entry_scores, normalise_criterion
from ebtui.locations import store_dir
from tests.support.factories import make_round, open_store


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "store"


@pytest.fixture
def store(root: Path) -> ResultsStore:
    s = open_store(root)
    yield s
    s.close()


def test_nothing_is_created_until_the_first_write(root: Path) -> None:
    s = ResultsStore(root)
    assert s.query() == []
    assert s.load_rounds() == []
    assert s.list_tournaments() == []
    with pytest.raises(StoreError, match="not found"):
        s.load_round("r-nothere")
    s.close()
    assert not root.exists()


def test_store_dir_prefers_explicit_then_env_then_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert store_dir(tmp_path / "x") == tmp_path / "x"
    monkeypatch.setenv("EBTUI_STORE", str(tmp_path / "env"))
    assert store_dir() == tmp_path / "env"
    monkeypatch.delenv("EBTUI_STORE")
    assert store_dir() == Path.cwd() / "saved"


def test_save_and_load_round_trip_as_readable_json(store: ResultsStore, root: Path) -> None:
    r = make_round(1)
    path = store.save_round(r)
    assert path == root / "rounds" / f"{r.id}.json"
    text = path.read_text()
    assert text.startswith("{\n  ")  # indent=2, human-readable
    assert json.loads(text)["dilemma_id"] == "gradient_entity"
    again = store.load_round(r.id)
    assert again == r
    assert [p.phase_type for p in again.phases] == [p.phase_type for p in r.phases]
    # a fresh store (another process, later) reads the same
    assert ResultsStore(root).load_round(r.id) == r
    assert not list((root / "rounds").glob(".*.tmp"))  # no temp file left behind


def test_resaving_a_round_after_each_phase_keeps_one_file_and_one_index_document(store: ResultsStore) -> None:
    r = make_round(2, status=RoundStatus.RUNNING, judged=False)
    store.save_round(r)
    r.status = RoundStatus.COMPLETE
    r.judgment = make_round(2).judgment
    store.save_round(r)
    rows = store.query()
    assert len(rows) == 1 and rows[0]["status"] == "complete" and rows[0]["total_a"] == 7 * 7
    assert len(list(store.rounds_dir.glob("*.json"))) == 1


def test_bad_ids_and_unreadable_files_give_errors_naming_the_file(store: ResultsStore, root: Path) -> None:
    with pytest.raises(StoreError, match="invalid round id"):
        store.load_round("../etc/passwd")
    with pytest.raises(StoreError, match="invalid round id"):
        store.save_round(make_round(0, round_id="a/b"))
    r = make_round(0)
    path = store.save_round(r)
    path.write_text("{ not json")
    with pytest.raises(StoreError) as err:
        store.load_round(r.id)
    assert str(path) in str(err.value) and "not a readable round" in str(err.value)


def test_index_document_is_small_and_holds_effective_scores(store: ResultsStore, root: Path) -> None:
    r = make_round(3, tournament="t-1")
    store.save_round(r)
    store.flush()
    db = TinyDB(root / "index.json", access_mode="r")
    try:
        (doc,) = db.table("rounds").all()
    finally:
        db.close()
    assert doc["id"] == r.id and doc["team_a"] == "alpha" and doc["judge"] == "gamma"
    assert doc["tournament_id"] == "t-1" and doc["path"] == f"rounds/{r.id}.json"
    assert doc["scores_a"] == [8] * 7 and doc["parsed_total_b"] == 42
    assert entry_scores(doc, "a") == {c: 8 for c in CRITERIA} and entry_scores({"scores_b": None}, "b") == {}
    assert "prompt" not in json.dumps(doc) and len(json.dumps(doc)) < 1500


def _populate(store: ResultsStore) -> list[Round]:
    rounds = [
        make_round(0, team_a="alpha", team_b="beta", judge="gamma", dilemma="d1", tournament="t1"),
        make_round(1, team_a="beta", team_b="alpha", judge="gamma", dilemma="d2", tournament="t1"),
        make_round(2, team_a="gamma", team_b="beta", judge="alpha", dilemma="d1", missing=("consistency",)),
        make_round(3, team_a="alpha", team_b="gamma", judge="beta", dilemma="d2",
                   status=RoundStatus.INCOMPLETE, judged=False),
    ]
    for r in rounds:
        store.save_round(r)
    return rounds


def test_filters(store: ResultsStore) -> None:
    r0, r1, r2, r3 = _populate(store)

    def ids(**f: object) -> list[str]:
        return [e["id"] for e in store.query(**f)]

    assert ids() == [r0.id, r1.id, r2.id, r3.id]  # oldest first
    assert ids(model="alpha") == [r0.id, r1.id, r2.id, r3.id]  # any role
    assert ids(model="alpha", role="team_a") == [r0.id, r3.id]
    assert ids(model="alpha", role="team_b") == [r1.id]
    assert ids(model="alpha", role="judge") == [r2.id]
    assert ids(judge="gamma") == [r0.id, r1.id]
    assert ids(dilemma="d2") == [r1.id, r3.id]
    assert ids(tournament="t1") == [r0.id, r1.id]
    assert ids(status="incomplete") == [r3.id]
    assert ids(status=["complete", "incomplete"]) == [r0.id, r1.id, r2.id, r3.id]
    assert ids(needs_review=True) == [r2.id]
    assert ids(needs_review=False) == [r0.id, r1.id, r3.id]
    assert ids(dilemma="d1", model="beta") == [r0.id, r2.id]
    assert ids(newest_first=True, limit=2) == [r3.id, r2.id]
    assert ids(model="nobody") == []
    assert [r.id for r in store.load_rounds(dilemma="d1", judge="alpha")] == [r2.id]
    assert store.load_rounds(dilemma="d1")[0] == r0


@pytest.mark.parametrize(
    ("filters", "error", "message"),
    [
        ({"modle": "x"}, TypeError, "unknown filter.*modle"),
        ({"role": "team_a"}, ValueError, "needs a model"),
        ({"model": "x", "role": "captain"}, ValueError, "unknown role 'captain'"),
        ({"status": "done"}, ValueError, "unknown status 'done'"),
        ({"needs_review": "yes"}, ValueError, "needs_review must be"),
        ({"limit": -1}, ValueError, "limit must be"),
    ],
)
def test_bad_filters_are_named(store: ResultsStore, filters: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        store.query(**filters)
    with pytest.raises(error, match=message):
        store.load_rounds(**filters)


def test_override_keeps_parsed_value_time_note_and_clearing_restores(store: ResultsStore, root: Path) -> None:
    r = make_round(1)  # team A scores 6 everywhere
    store.save_round(r)
    out = store.apply_override(r.id, "a", "consistency", 9, "the judge misread the rebuttal")
    assert out.judgment.effective_scores("a").consistency == 9
    assert out.judgment.team_a_scores.consistency == 6  # parsed value kept
    (ov,) = out.judgment.overrides
    assert (ov.parsed_value, ov.value, ov.note) == (6, 9, "the judge misread the rebuttal") and ov.time
    # persisted, and the index shows the effective value
    loaded = ResultsStore(root).load_round(r.id)
    assert loaded.judgment.effective_scores("a").consistency == 9
    (row,) = ResultsStore(root).query()
    assert entry_scores(row, "a")["consistency"] == 9 and row["total_a"] == 6 * 6 + 9 and row["parsed_total_a"] == 42
    assert row["overrides"] == 1

    store.apply_override(r.id, "a", "consistency", 3, "second thoughts")
    cleared = store.apply_override(r.id, "A", "Consistency", None, "back to the judge")
    assert cleared.judgment.effective_scores("a").consistency == 6
    assert [o.value for o in cleared.judgment.overrides] == [9, 3, None]  # full history
    assert store.query()[0]["total_a"] == 42 and store.query()[0]["overrides"] == 0


def test_override_of_a_missing_score_resolves_needs_review(store: ResultsStore) -> None:
    r = make_round(0, missing=("consistency", "framework_awareness"))
    store.save_round(r)
    assert store.query(needs_review=True)[0]["id"] == r.id
    store.apply_override(r.id, "a", "consistency", 7, "read from the prose")
    assert store.query(needs_review=True)  # one still missing
    store.apply_override(r.id, "a", "Framework awareness", 6, "read from the prose")
    assert store.query(needs_review=True) == []
    assert store.load_round(r.id).judgment.team_a_scores.consistency is None  # parsed stays missing


def test_override_of_a_round_without_judgment_scores_it_by_hand(store: ResultsStore) -> None:
    r = make_round(0, judged=False, status=RoundStatus.INCOMPLETE)
    store.save_round(r)
    assert store.query()[0]["needs_review"] is False and store.query()[0]["has_judgment"] is False
    out = store.apply_override(r.id, "b", "consistency", 5, "judge failed; scored by hand")
    assert out.judgment.parse_method == "manual" and out.judgment.needs_review
    assert out.judgment.team_b_scores.consistency is None
    assert store.query()[0]["needs_review"] is True
    for team in ("a", "b"):
        for c in CRITERIA:
            store.apply_override(r.id, team, c, 5, "by hand")
    row = store.query()[0]
    assert row["needs_review"] is False and row["total_a"] == row["total_b"] == 35


@pytest.mark.parametrize(
    ("team", "criterion", "value", "message"),
    [
        ("a", "consistency", 0, "1 to 10"),
        ("a", "consistency", 11, "1 to 10"),
        ("a", "consistency", True, "1 to 10"),
        ("a", "consistency", 7.5, "1 to 10"),
        ("c", "consistency", 5, "unknown team 'c'"),
        ("a", "charisma", 5, "unknown criterion 'charisma'"),
        ("a", "consistency", None, "no override to clear"),
    ],
)
def test_bad_overrides_are_refused_and_nothing_changes(
    store: ResultsStore, team: str, criterion: str, value: object, message: str
) -> None:
    r = make_round(0)
    path = store.save_round(r)
    before = path.read_bytes()
    with pytest.raises(ValueError, match=message):
        store.apply_override(r.id, team, criterion, value, "x")  # type: ignore[arg-type]
    assert path.read_bytes() == before


def test_override_of_unknown_round_names_the_file(store: ResultsStore) -> None:
    with pytest.raises(StoreError, match="r-missing.json does not exist"):
        store.apply_override("r-missing", "a", "consistency", 5, "x")


def test_criterion_names_and_labels() -> None:
    assert normalise_criterion("Stakeholder recognition") == "stakeholder_recognition"
    assert normalise_criterion("intellectual-honesty") == "intellectual_honesty"
    with pytest.raises(ValueError, match="expected one of"):
        normalise_criterion("style")


def test_override_made_while_the_engine_holds_the_round_survives_its_later_saves(root: Path) -> None:
    engine = open_store(root)
    tui = open_store(root)  # a second instance (another process or the TUI)
    r = make_round(0, judged=False, status=RoundStatus.RUNNING)
    engine.save_round(r)
    tui.apply_override(r.id, "a", "consistency", 9, "scored while it ran")
    engine.save_round(r)  # the engine's copy has no judgment: the override is carried over
    r.judgment = make_round(0).judgment  # then the judge's judgment replaces the whole thing
    r.status = RoundStatus.COMPLETE
    engine.save_round(r)
    final = ResultsStore(root).load_round(r.id)
    assert final.status == RoundStatus.COMPLETE
    assert final.judgment.team_a_scores.consistency == 5  # the judge's parsed score
    assert final.judgment.effective_scores("a").consistency == 9  # the human's override survived
    # and the same holds when one store instance does both (the TUI running a round)
    one = open_store(root)
    r2 = make_round(1)
    one.save_round(r2)
    one.apply_override(r2.id, "b", "consistency", 2, "same instance")
    r2.status = RoundStatus.COMPLETE
    one.save_round(r2)
    assert one.load_round(r2.id).judgment.effective_scores("b").consistency == 2
    for s in (engine, tui, one):
        s.close()


def test_index_is_written_in_batches_not_on_every_save(root: Path) -> None:
    s = open_store(root)
    writes: list[int] = []
    original = s.index.write

    def counting(**kw: object) -> None:
        before = s.index_writes
        original(**kw)
        writes.append(s.index_writes - before)

    s.index.write = counting  # type: ignore[method-assign]
    stamps = set()
    for i in range(300):
        s.save_round(make_round(i, text_size=10))
        st = os.stat(s.index_path) if s.index_path.exists() else None
        stamps.add((st.st_ino, st.st_mtime_ns) if st else None)
    assert s.index_writes <= 300 // ResultsStore.FLUSH_MIN_SAVES + 1
    assert len(stamps) <= s.index_writes + 1  # index.json really was replaced only that often
    s.close()
    assert len(ResultsStore(root).query()) == 300  # close() wrote the rest


def test_flush_interval_grows_with_the_index_so_cost_per_save_stays_flat(root: Path) -> None:
    s = open_store(root)
    s.FLUSH_SECONDS = 3600  # count-based only for this test
    for i in range(1200):
        s.save_round(make_round(i, text_size=10))
    # 64 per flush up to 512 documents, then n/8: far fewer than 1200/64 ≈ 19 flushes
    assert s.index_writes <= 14
    s.close()


def test_a_deleted_index_is_rebuilt_from_the_round_files(store: ResultsStore, root: Path) -> None:
    rounds = _populate(store)
    store.close()
    (root / "index.json").unlink()
    again = ResultsStore(root)
    assert [e["id"] for e in again.query()] == [r.id for r in rounds]
    assert again.query(needs_review=True)[0]["id"] == rounds[2].id
    assert (root / "index.json").exists()  # written back


@pytest.mark.parametrize("garbage", ["", "{ broken", "[1, 2]", '{"rounds": {"x": 5}}', "\x00\x01"])
def test_a_corrupt_index_is_rebuilt(store: ResultsStore, root: Path, garbage: str) -> None:
    rounds = _populate(store)
    store.close()
    (root / "index.json").write_text(garbage)
    assert [e["id"] for e in ResultsStore(root).query()] == [r.id for r in rounds]


def test_a_stale_index_catches_up_with_files_saved_after_it(store: ResultsStore, root: Path) -> None:
    rounds = _populate(store)
    store.close()
    # a process killed before its index flush: round files newer than the index
    late = make_round(9, dilemma="late")
    (root / "rounds" / f"{late.id}.json").write_text(late.model_dump_json(indent=2))
    changed = rounds[0].model_copy(update={"status": RoundStatus.INCOMPLETE})
    (root / "rounds" / f"{changed.id}.json").write_text(changed.model_dump_json(indent=2))
    (root / "rounds" / f"{rounds[1].id}.json").unlink()
    s = ResultsStore(root)
    assert [e["id"] for e in s.query()] == [rounds[0].id, rounds[2].id, rounds[3].id, late.id]
    assert s.query(dilemma="late")[0]["id"] == late.id
    assert s.query(status="incomplete")[0]["id"] in {changed.id, rounds[3].id}
    assert len(s.query(status="incomplete")) == 2


def test_rebuild_index_skips_and_reports_unreadable_files_without_deleting_them(
    store: ResultsStore, root: Path
) -> None:
    rounds = _populate(store)
    bad = root / "rounds" / "r-broken.json"
    bad.write_text('{"id": "r-broken", "phases": 12}')
    other = root / "rounds" / "r-other.json"
    other.write_text(rounds[0].model_dump_json())  # id does not match the file name
    (root / "rounds" / ".r-x.json.123.tmp").write_text("{")  # a temp file from a killed writer
    assert store.rebuild_index() == 4
    assert {Path(p).name for p, _ in store.problems} == {"r-broken.json", "r-other.json"}
    assert bad.exists() and other.exists()
    assert len(store.query()) == 4


def test_query_sees_rounds_another_store_flushed(root: Path) -> None:
    a = open_store(root)
    b = open_store(root)
    a.save_round(make_round(0))
    assert len(b.query()) == 1
    a.save_round(make_round(1))
    a.flush()
    assert len(b.query()) == 2  # picked up from index.json
    a.save_round(make_round(2))  # not flushed yet: refresh() scans the directory
    assert b.refresh() == 1 and len(b.query()) == 3
    a.close()
    b.close()


def test_threads_saving_and_overriding_at_once_lose_nothing(store: ResultsStore) -> None:
    base = [make_round(i, text_size=50) for i in range(20)]
    for r in base:
        store.save_round(r)
    errors: list[BaseException] = []

    def saver(k: int) -> None:
        try:
            for i in range(40):
                store.save_round(make_round(100 + k * 100 + i, round_id=f"r-t{k}-{i}", text_size=50))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    def overrider() -> None:
        try:
            for r in base:
                store.apply_override(r.id, "b", "consistency", 10, "thread")
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=saver, args=(k,)) for k in range(3)] + [threading.Thread(target=overrider)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    store.close()
    fresh = ResultsStore(store.root)
    assert len(fresh.query()) == 20 + 120
    assert all(entry_scores(e, "b")["consistency"] == 10 for e in fresh.query() if e["id"] in {r.id for r in base})


def test_durable_default_follows_the_environment(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert ResultsStore(root).durable is True
    monkeypatch.setenv("EBTUI_STORE_FSYNC", "0")
    assert ResultsStore(root).durable is False
    s = ResultsStore(root, durable=True)
    r = make_round(0)
    s.save_round(r)
    assert s.load_round(r.id) == r


def test_tournaments(store: ResultsStore, root: Path) -> None:
    t1 = Tournament(name="first", models=["a", "b"], dilemmas=["d1"], total_rounds=4)
    t2 = Tournament(name="second", created=t1.created.replace(year=t1.created.year + 1))
    store.save_tournament(t2)
    path = store.save_tournament(t1)
    assert path == root / "tournaments" / f"{t1.id}.json"
    assert store.load_tournament(t1.id) == t1
    (root / "tournaments" / "t-bad.json").write_text("nope")
    assert [t.name for t in store.list_tournaments()] == ["first", "second"]
    with pytest.raises(StoreError, match="t-bad.json"):
        store.load_tournament("t-bad")
    with pytest.raises(StoreError, match="not found"):
        store.load_tournament("t-none")


@pytest.mark.slow
def test_ten_thousand_rounds_index_writes_grow_logarithmically(root: Path) -> None:
    s = open_store(root)
    s.FLUSH_SECONDS = 3600  # count-based only: the number of index writes is then deterministic
    proto = make_round(0, text_size=100)
    for i in range(10_000):
        s.save_round(proto.model_copy(update={"id": f"r-{i:05d}"}))
    # every 64 saves up to 512 documents, then every n/8: about 8 + log(10000/512)/log(1.125) ≈ 33
    assert s.index_writes <= 40
    s.close()
    fresh = ResultsStore(root)
    assert len(fresh.query()) == 10_000
    assert fresh.index_writes == 0  # the index was complete: nothing to re-read or rewrite on open
