"""`ebtui import eb`: the public Ethics Bowl runner's round files into ebtui rounds.

Always-run tests use round files generated from this project's own text (tests/support/eb_synth.py) with known
scores; the two real files in ../shared/fixtures/eb_rounds are read in place when present.
"""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from ebtui.cli import cli
from ebtui.core.importers.eb import defaulted_scores, import_rounds, read_sources, runner_criteria_table
from ebtui.core.records import CRITERIA, PhaseStatus, PhaseType, Round, RoundStatus
from ebtui.core.review import needs_review
from ebtui.core.store import ResultsStore
from tests.support.eb_synth import MODELS, make_round, make_run, write_run
from tests.support.paths import SHARED_FIXTURES

EB_ROUNDS = SHARED_FIXTURES / "eb_rounds"


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "lite_run" / "rounds"
    write_run(folder, make_run())
    return folder


def _import(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["import", "eb", *args, "--store", str(tmp_path / "store")])
    return result.exit_code, result.stdout, result.stderr


def _means(rounds: list[Round]) -> dict[tuple[str, str], tuple[float, int]]:
    """Per model and criterion: mean and n of the parsed scores (no overrides) over every team seat."""
    vals: dict[tuple[str, str], list[int]] = defaultdict(list)
    for r in rounds:
        assert r.judgment is not None
        for team, model in (("a", r.team_a_model), ("b", r.team_b_model)):
            for c, v in r.judgment.parsed_scores(team).as_dict().items():
                if v is not None:
                    vals[(model, c)].append(v)
    return {k: (sum(v) / len(v), len(v)) for k, v in vals.items()}


def _runner_table(records: list[dict], *, keep_defaults: bool) -> dict[tuple[str, str], tuple[float, int]]:
    """The runner's "Scores by Criterion": recorded scores over every seat (its 5s counted, or not)."""
    vals: dict[tuple[str, str], list[int]] = defaultdict(list)
    for rec in records:
        j = rec["judgment"]
        bad = {(line.split()[-1].lower(), line.split()[3]) for line in j["parse_errors"]}
        for t, key in (("a", "team_a_model"), ("b", "team_b_model")):
            for c, v in j[f"team_{t}_scores"].items():
                if keep_defaults or (t, c) not in bad:
                    vals[(rec[key], c)].append(v)
    return {k: (sum(v) / len(v), len(v)) for k, v in vals.items()}


# ---------------------------------------------------------------------------------------- one round


def test_one_file_becomes_a_round_with_phases_timings_tokens_and_dilemma(run_dir: Path, tmp_path: Path) -> None:
    src = sorted(run_dir.glob("001_*.json"))[0]
    data = json.loads(src.read_text())
    code, out, err = _import(tmp_path, str(src))
    assert code == 0, err
    assert "imported 1 round" in out
    (r,) = ResultsStore(tmp_path / "store").load_rounds()
    assert (r.team_a_model, r.team_b_model, r.judge_model) == (MODELS[0], MODELS[1], MODELS[2])
    assert r.status == RoundStatus.COMPLETE
    assert [p.phase_type for p in r.phases] == [PhaseType.PRESENTATION, PhaseType.RESPONSE, PhaseType.REBUTTAL,
                                                 PhaseType.CONSISTENCY_TEST, PhaseType.JUDGMENT]
    for raw, ph in zip([p for p in data["phases"] if p["phase_type"] != "consistency_test_b"], r.phases,
                       strict=True):
        end = datetime.fromisoformat(raw["timestamp"]).replace(tzinfo=UTC)
        assert ph.finished_at == end  # the runner stamps a phase when its answer arrives
        assert ph.timestamp == end - timedelta(seconds=raw["response_time_seconds"])
        assert ph.latency == raw["response_time_seconds"]
        assert (ph.usage.input_tokens, ph.usage.output_tokens) == (raw["input_tokens"], raw["output_tokens"])
        assert ph.prompt == raw["prompt"] and ph.response == raw["response"]
        assert ph.model_id == raw["model_id"] and ph.status == PhaseStatus.COMPLETE
    # Team B's consistency test has no ebtui phase type: kept whole, with its speaker
    b_test = r.imported.extra_phases["consistency_test_b"]
    assert b_test.model_id == MODELS[1] and b_test.response.startswith("Consistency B 1")
    # provenance
    assert r.imported.runner == "moral_reasoning_quality_evaluation"
    assert r.imported.source_file == str(src.resolve())
    assert r.imported.source_round_id == data["id"] and r.imported.source_run == "lite_run"
    # the dilemma as the prompts gave it (no document loaded)
    d = r.imported.dilemma
    assert (d.id, d.title, d.category) == ("lighthouse_keeper", "The Lighthouse Keeper", "Duty And Care")
    assert r.dilemma_title == "The Lighthouse Keeper"
    assert d.core_scenario.startswith("A keeper on a remote island") and d.core_scenario.endswith("channel.")
    assert d.questions == ["Should she leave the lamp?", "Does it matter that the ferry is only probably at sea?",
                           "Would a standing order from the harbour master change the answer?"]
    assert d.asymmetric_features == ["Hidden Fact: The ferry captain has radar but rarely uses it."]
    assert d.consistency_case.startswith("A night nurse") and "Structural Parallel" in d.consistency_case
    # scores: the judge's own, all read, nothing flagged
    j = r.judgment
    assert j.parsed_scores("a").as_dict() == data["judgment"]["team_a_scores"]
    assert j.parsed_scores("b").as_dict() == data["judgment"]["team_b_scores"]
    assert not j.needs_review and j.parse_method == "imported"
    assert j.raw_response == data["phases"][-1]["response"]
    assert set(r.imported.score_sources["a"].values()) == {"imported"}


def test_a_defaulted_five_is_missing_and_needs_review(run_dir: Path, tmp_path: Path) -> None:
    src = sorted(run_dir.glob("003_*.json"))[0]
    data = json.loads(src.read_text())
    assert data["judgment"]["team_b_scores"]["intellectual_honesty"] == 5  # what the runner recorded
    assert "Could not parse intellectual_honesty for Team B" in data["judgment"]["parse_errors"]
    code, _, err = _import(tmp_path, str(src))
    assert code == 0, err
    (r,) = ResultsStore(tmp_path / "store").load_rounds()
    b = r.judgment.parsed_scores("b")
    assert b.intellectual_honesty is None and b.consistency is None
    assert r.judgment.effective_scores("b").missing() == ["consistency", "intellectual_honesty"]
    # every other score is the runner's
    others = {c: v for c, v in data["judgment"]["team_b_scores"].items()
              if c not in ("intellectual_honesty", "consistency")}
    assert {c: v for c, v in b.as_dict().items() if v is not None} == others
    assert r.judgment.needs_review and needs_review(r.judgment)
    assert any(x.startswith("Team B Intellectual honesty: missing") and "recorded 5" in x
               for x in r.judgment.review_reasons)
    assert {(i.team, i.criterion, i.kind) for i in r.judgment.review_items} == {
        ("b", "consistency", "missing"), ("b", "intellectual_honesty", "missing")}
    assert sorted(r.imported.defaulted) == [("b", "consistency"), ("b", "intellectual_honesty")]
    assert r.imported.runner_scores["b"]["intellectual_honesty"] == 5  # kept for the record
    assert r.imported.score_sources["b"]["intellectual_honesty"] == "missing"
    assert r.judgment.source_of("b", "intellectual_honesty") is None
    assert r.judgment.source_of("b", "principle_articulation").kind == "imported"
    store = str(tmp_path / "store")

    def listed() -> str:
        return CliRunner().invoke(cli, ["rounds", "list", "--needs-review", "--store", store]).stdout

    assert r.id in listed()
    run = CliRunner().invoke(cli, ["rounds", "override", r.id, "--team", "b", "--criterion", "intellectual_honesty",
                                   "--value", "6", "--note", "read by hand", "--store", store])
    assert run.exit_code == 0, run.stderr
    assert r.id in listed()  # one of the two defaulted scores is still missing
    run = CliRunner().invoke(cli, ["rounds", "override", r.id, "--team", "b", "--criterion", "consistency",
                                   "--value", "7", "--note", "read by hand", "--store", store])
    assert run.exit_code == 0, run.stderr
    assert r.id not in listed()
    back = ResultsStore(tmp_path / "store").load_round(r.id).judgment
    assert back.parsed_scores("b").intellectual_honesty is None  # the parsed (imported) value stays missing
    assert back.effective_scores("b").intellectual_honesty == 6


def test_runner_value_wins_over_a_disagreeing_reparse_and_is_flagged(run_dir: Path, tmp_path: Path) -> None:
    # round 5: the judge wrote "Framework Awareness: 12"; the runner clamped it to 10, ebtui reads no score
    src = sorted(run_dir.glob("005_*.json"))[0]
    data = json.loads(src.read_text())
    assert "Framework Awareness: 12" in data["phases"][-1]["response"]
    _import(tmp_path, str(src))
    (r,) = ResultsStore(tmp_path / "store").load_rounds()
    assert r.judgment.parsed_scores("a").framework_awareness == 10
    assert r.imported.score_sources["a"]["framework_awareness"] == "imported"
    (dis,) = r.imported.disagreements
    assert dis["team"] == "a" and dis["criterion"] == "framework_awareness" and dis["runner"] == 10
    assert dis["ebtui"] != 10
    assert r.judgment.needs_review
    (item,) = r.judgment.review_items
    assert (item.team, item.criterion, item.kind) == ("a", "framework_awareness", "conflict")
    assert item.message.startswith("Team A Framework awareness: the original runner recorded 10")
    src = r.judgment.source_of("a", "framework_awareness")
    assert src.kind == "imported" and src.value == 10 and "ebtui's parser reads" in src.note
    # a score both read the same way carries ebtui's source text
    same = r.judgment.source_of("a", "consistency")
    assert same.kind == "imported" and same.text.strip("- ").startswith("Consistency:")
    store = str(tmp_path / "store")
    shown = CliRunner().invoke(cli, ["rounds", "show", r.id, "--store", store]).stdout
    assert "imported" in shown
    run = CliRunner().invoke(cli, ["rounds", "accept", r.id, "--team", "a", "--criterion", "framework_awareness",
                                   "--note", "the judge wrote 12; 10 is the top of the scale", "--store", store])
    assert run.exit_code == 0, run.stderr
    assert not needs_review(ResultsStore(tmp_path / "store").load_round(r.id).judgment)


def test_defaulted_lines_are_read_as_that_runner_writes_them() -> None:
    found, other = defaulted_scores([
        "Could not parse intellectual_honesty for Team B",
        "Invalid score format for consistency in Team A",
        "Team A justification not extracted",
    ])
    assert found == {("b", "intellectual_honesty"), ("a", "consistency")}
    assert other == ["Team A justification not extracted"]


# ---------------------------------------------------------------------------------------- many rounds


def test_folder_jsonl_and_both_give_the_same_rounds_and_twice_adds_nothing(run_dir: Path, tmp_path: Path) -> None:
    code, out, err = _import(tmp_path, str(run_dir))  # the folder holds the .json files AND all_rounds.jsonl
    assert code == 0, err
    store = ResultsStore(tmp_path / "store")
    ids = {e["id"] for e in store.query()}
    assert len(ids) == 6
    assert "6 read twice" in out
    code, out, _ = _import(tmp_path, str(run_dir / "all_rounds.jsonl"))
    assert code == 0 and "imported 0 round" in out and "6 already" in out
    code, _, _ = _import(tmp_path, str(run_dir.parent))  # the run's folder (rounds/ inside) works too
    assert code == 0
    assert {e["id"] for e in ResultsStore(tmp_path / "store").query()} == ids


def test_jsonl_alone_and_json_files_alone_give_the_same_ids(run_dir: Path, tmp_path: Path) -> None:
    s1, s2 = ResultsStore(tmp_path / "s1"), ResultsStore(tmp_path / "s2")
    r1 = import_rounds([run_dir / "all_rounds.jsonl"], s1)
    r2 = import_rounds(sorted(run_dir.glob("*.json")), s2)
    assert not r1.problems and not r2.problems
    assert sorted(r.id for r in r1.imported) == sorted(r.id for r in r2.imported)
    assert len(r1.imported) == 6
    assert r1.imported[0].imported.source_line == 1


def test_an_edited_source_round_is_a_new_round(run_dir: Path, tmp_path: Path) -> None:
    src = sorted(run_dir.glob("001_*.json"))[0]
    store = ResultsStore(tmp_path / "s")
    first = import_rounds([src], store).imported[0]
    data = json.loads(src.read_text())
    data["judgment"]["team_a_scores"]["consistency"] = 1 if data["judgment"]["team_a_scores"]["consistency"] != 1 else 2
    src.write_text(json.dumps(data))
    second = import_rounds([src], store).imported[0]
    assert second.id != first.id and second.id.split("-")[1] == first.id.split("-")[1]


def test_tournament_groups_rounds(run_dir: Path, tmp_path: Path) -> None:
    code, out, err = _import(tmp_path, str(run_dir), "--tournament", "Spring migration")
    assert code == 0, err
    store = ResultsStore(tmp_path / "store")
    (t,) = store.list_tournaments()
    assert t.name == "Spring migration" and t.total_rounds == 6
    assert set(t.models) == set(MODELS) and t.dilemmas == ["lighthouse_keeper", "orchard_ledger"]
    assert len(store.load_rounds(tournament=t.id)) == 6
    # the name again finds the same tournament
    code, _, _ = _import(tmp_path, str(run_dir), "--tournament", "Spring migration")
    assert code == 0 and len(ResultsStore(tmp_path / "store").list_tournaments()) == 1


def test_bad_files_get_one_line_each_and_the_rest_import(run_dir: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "broken.json").write_text('{"id": "x", "phases": [', encoding="utf-8")
    nomodel = json.loads(sorted(run_dir.glob("002_*.json"))[0].read_text())
    del nomodel["team_a_model"]
    (bad / "nomodel.json").write_text(json.dumps(nomodel), encoding="utf-8")
    (bad / "lines.jsonl").write_text(
        (run_dir / "all_rounds.jsonl").read_text().splitlines()[0] + "\nnot json\n", encoding="utf-8")
    (bad / "empty.json").write_bytes(b"")
    good = sorted(run_dir.glob("00[45]_*.json"))
    code, out, err = _import(tmp_path, str(bad), *map(str, good), str(tmp_path / "absent.json"))
    assert code != 0
    lines = [ln for ln in err.splitlines() if ln.startswith("ebtui: import: ")]
    assert len(lines) == 5
    assert any("broken.json: not valid JSON" in ln for ln in lines)
    assert any("nomodel.json: missing or empty 'team_a_model'" in ln for ln in lines)
    assert any("lines.jsonl:2: not valid JSON" in ln for ln in lines)
    assert any("empty.json: empty file" in ln for ln in lines)
    assert any("absent.json: no such file" in ln for ln in lines)
    assert "Traceback" not in err
    assert len(ResultsStore(tmp_path / "store").query()) == 3  # the two good files and the good jsonl line


def test_unfinished_round_is_incomplete_not_running(tmp_path: Path) -> None:
    rec = make_round(1, "orchard_ledger", "alpha-1", "beta-2.5", "gamma-3", {c: 7 for c in CRITERIA},
                     {c: 6 for c in CRITERIA}, status="in_progress")
    rec["phases"] = rec["phases"][:2]
    rec["judgment"] = None
    p = tmp_path / "r.json"
    p.write_text(json.dumps(rec))
    res = import_rounds([p], ResultsStore(tmp_path / "s"))
    (r,) = res.imported
    assert r.status == RoundStatus.INCOMPLETE and r.judgment is None and r.error


def test_old_round_files_without_the_field_still_load() -> None:
    r = Round(dilemma_id="d", team_a_model="a", team_b_model="b", judge_model="j")
    data = json.loads(r.model_dump_json())
    data.pop("imported")
    assert Round.model_validate(data).imported is None


# ---------------------------------------------------------------------------------------- the numbers


def test_raw_means_equal_the_runner_table_except_defaulted_cells(run_dir: Path, tmp_path: Path) -> None:
    records = [json.loads(line) for line in (run_dir / "all_rounds.jsonl").read_text().splitlines()]
    code, _, err = _import(tmp_path, str(run_dir))
    assert code == 0, err
    ours = _means(ResultsStore(tmp_path / "store").load_rounds())
    published = _runner_table(records, keep_defaults=True)  # what the runner itself printed
    real = _runner_table(records, keep_defaults=False)  # the same without its invented 5s
    defaulted = {(records[2]["team_b_model"], "intellectual_honesty"), (records[2]["team_b_model"], "consistency")}
    assert set(ours) == set(published)
    for key, (mean, n) in published.items():
        if key in defaulted:
            assert ours[key][1] == n - 1
            assert ours[key][0] == pytest.approx(real[key][0], abs=1e-9)
        else:
            assert ours[key] == (pytest.approx(mean, abs=0.01), n)
    assert runner_criteria_table(read_sources([run_dir / "all_rounds.jsonl"])[0]) == pytest.approx(real)


# ---------------------------------------------------------------------------------------- the real files


@pytest.fixture
def shared_rounds() -> Path:
    if not EB_ROUNDS.is_dir():
        pytest.skip(f"shared fixture absent (a fresh clone has no ../shared beside it): {EB_ROUNDS}")
    return EB_ROUNDS


def test_shared_runner_files_import_with_the_recorded_scores(shared_rounds: Path, tmp_path: Path) -> None:
    records = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(shared_rounds.glob("*.json"))]
    store = ResultsStore(tmp_path / "s")
    res = import_rounds([shared_rounds], store)
    assert not res.problems and len(res.imported) == len(records) == 2
    again = import_rounds([shared_rounds], store)
    assert not again.imported and len(again.already) == 2
    rounds = store.load_rounds()
    by_source = {r.imported.source_round_id: r for r in rounds}
    for rec in records:
        r = by_source[rec["id"]]
        assert r.status == RoundStatus.COMPLETE and "consistency_test_b" in r.imported.extra_phases
        assert r.dilemma_title == "The Gradient Entity" and len(r.imported.dilemma.questions) == 3
        for t in ("a", "b"):
            assert r.judgment.parsed_scores(t).as_dict() == rec["judgment"][f"team_{t}_scores"]
    ours = _means(rounds)
    assert ours == pytest.approx(_runner_table(records, keep_defaults=True))


def test_shared_runner_files_ebtui_reparse_agrees(shared_rounds: Path, tmp_path: Path) -> None:
    """Evidence for the judgment parser: its reading of the real judge replies against the runner's."""
    res = import_rounds([shared_rounds], ResultsStore(tmp_path / "s"))
    disagreements = [(r.imported.source_round_id, d) for r in res.imported for d in r.imported.disagreements]
    assert disagreements == []


# ---------------------------------------------------------------------------------------- marks


def test_imported_rounds_are_marked_in_rounds_show_and_the_browser(run_dir: Path, tmp_path: Path) -> None:
    from ebtui.tui.screens.results import entry_row

    src = sorted(run_dir.glob("001_*.json"))[0]
    _import(tmp_path, str(src))
    store = ResultsStore(tmp_path / "store")
    (entry,) = store.query()
    shown = CliRunner().invoke(cli, ["rounds", "show", entry["id"], "--store", str(tmp_path / "store")])
    assert f"Imported from moral_reasoning_quality_evaluation: {src.resolve()}" in shown.stdout
    assert "⇩" in str(entry_row(entry, ("status",))[0])
    native = dict(entry, id="r-0123456789ab")
    assert "⇩" not in str(entry_row(native, ("status",))[0])


def test_document_dilemmas_are_used_when_the_document_has_the_id(run_dir: Path, tmp_path: Path) -> None:
    from tests.support.docx_docs import bold_label, dilemma_doc

    doc = dilemma_doc("The Lighthouse Keeper", "Duty", "A keeper and a storm.")
    bold_label(doc, "Question:", "Leave the lamp?")
    path = tmp_path / "d.docx"
    doc.save(str(path))
    code, _, err = _import(tmp_path, str(run_dir / "all_rounds.jsonl"), "--document", str(path))
    assert code == 0, err
    rounds = ResultsStore(tmp_path / "store").load_rounds()
    keeper = [r for r in rounds if r.dilemma_id == "lighthouse_keeper"]
    orchard = [r for r in rounds if r.dilemma_id == "orchard_ledger"]
    assert keeper and all(r.imported.dilemma is None and r.document == str(path) for r in keeper)
    assert orchard and all(r.imported.dilemma.title == "The Orchard Ledger" and r.document == "" for r in orchard)


def test_tournament_given_later_groups_rounds_already_imported(run_dir: Path, tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    code, _, _ = _import(tmp_path, str(run_dir))
    assert code == 0
    store = ResultsStore(store_dir)
    rid = store.query()[0]["id"]
    store.apply_override(rid, "a", "consistency", 3, "checked by hand")
    code, out, _ = _import(tmp_path, str(run_dir), "--tournament", "later")
    assert code == 0 and "6 of them now in the tournament" in out
    store = ResultsStore(store_dir)
    assert len(store.query()) == 6 and len(store.load_rounds(tournament="later")) == 6
    assert store.load_round(rid).judgment.effective_scores("a").consistency == 3  # the override survives
    code, out, _ = _import(tmp_path, str(run_dir), "--tournament", "other")
    assert "6 of them stay in tournament(s) later" in out
    assert len(ResultsStore(store_dir).load_rounds(tournament="later")) == 6


def test_no_runner_judgment_uses_ebtuis_parse(tmp_path: Path) -> None:
    rec = make_round(2, "orchard_ledger", "alpha-1", "beta-2.5", "gamma-3", {c: 7 for c in CRITERIA},
                     {c: 6 for c in CRITERIA})
    rec["judgment"] = None
    p = tmp_path / "r.json"
    p.write_text(json.dumps(rec))
    (r,) = import_rounds([p], ResultsStore(tmp_path / "s")).imported
    assert r.judgment.parsed_scores("a").as_dict() == {c: 7 for c in CRITERIA}
    assert r.judgment.parsed_scores("b").as_dict() == {c: 6 for c in CRITERIA}
    assert set(r.imported.score_sources["a"].values()) == {"ebtui"}
    assert r.judgment.source_of("a", "consistency").kind == "line"  # ebtui's own provenance
    assert not needs_review(r.judgment)  # a clean reply read by ebtui needs no human


def test_provenance_lines_for_reports(run_dir: Path, tmp_path: Path) -> None:
    from ebtui.core.importers.eb import provenance_lines

    res = import_rounds([run_dir / "all_rounds.jsonl"], ResultsStore(tmp_path / "s"))
    native = Round(dilemma_id="d", team_a_model="a", team_b_model="b", judge_model="j")
    (line,) = provenance_lines([*res.imported, native])
    assert line.startswith("6 round(s) imported from moral_reasoning_quality_evaluation (run lite_run, 1 source")
    assert "2 score(s) the runner defaulted to 5 are missing; 1 disagreement(s)" in line


def test_a_round_saved_twice_in_the_jsonl_imports_once_as_its_latest_save(tmp_path: Path) -> None:
    rec = make_round(4, "orchard_ledger", "alpha-1", "beta-2.5", "gamma-3", {c: 7 for c in CRITERIA},
                     {c: 6 for c in CRITERIA})
    early = json.loads(json.dumps(rec))
    early["phases"] = early["phases"][:3]
    early["judgment"] = None
    early["status"] = "in_progress"
    path = tmp_path / "all_rounds.jsonl"
    path.write_text(json.dumps(early) + "\n" + json.dumps(rec) + "\n", encoding="utf-8")
    res = import_rounds([path], ResultsStore(tmp_path / "s"))
    (r,) = res.imported
    assert r.status == RoundStatus.COMPLETE and r.imported.source_line == 2
    assert res.superseded == [f"{path}:1"]
    # the order in the file does not matter
    path.write_text(json.dumps(rec) + "\n" + json.dumps(early) + "\n", encoding="utf-8")
    res = import_rounds([path], ResultsStore(tmp_path / "s2"))
    assert [x.imported.source_line for x in res.imported] == [1] and res.superseded == [f"{path}:2"]


def test_imported_round_carries_the_dilemma_snapshot_for_rejudging(run_dir: Path, tmp_path: Path) -> None:
    from ebtui.core.records import Dilemma

    (r, *_) = import_rounds([run_dir / "all_rounds.jsonl"], ResultsStore(tmp_path / "s")).imported
    snap = Dilemma.model_validate(r.settings.dilemma)
    assert snap == r.imported.dilemma and snap.id == r.dilemma_id


async def test_an_ebtui_judge_can_rejudge_an_imported_exchange(run_dir: Path, tmp_path: Path) -> None:
    from ebtui.core.round import judge_exchange
    from ebtui.providers.scripted import ScriptedClient

    store = ResultsStore(tmp_path / "s")
    (source, *_) = import_rounds([run_dir / "all_rounds.jsonl"], store).imported
    events = [e async for e in judge_exchange(source, "scripted-judge", ScriptedClient("scripted-judge"), store)]
    new = events[-1].round
    assert new.status == RoundStatus.COMPLETE and new.exchange_id == source.id and new.imported is None
    assert new.phase("presentation").response == source.phase("presentation").response
    assert new.judgment is not None and not new.judgment.parsed_scores("a").missing()


def test_results_folder_with_several_runs_and_a_tournament_per_run(tmp_path: Path) -> None:
    results = tmp_path / "ethics_bowls"
    run = make_run()
    write_run(results / "lite_a" / "rounds", run[:3])
    write_run(results / "lite_b" / "rounds", run[3:])
    (results / "lite_a" / "checkpoints").mkdir()
    (results / "lite_a" / "checkpoints" / "x.json").write_text(json.dumps(run[0]))
    (results / "lite_a" / "manifest.json").write_text(json.dumps({"tournament_id": "t", "rounds": []}))
    code, out, err = _import(tmp_path, str(results), "--tournament-per-run")
    assert code == 0, err
    store = ResultsStore(tmp_path / "store")
    assert {t.name: t.total_rounds for t in store.list_tournaments()} == {"lite_a": 3, "lite_b": 3}
    assert len(store.query()) == 6
    code, _, err = _import(tmp_path, str(results), "--tournament-per-run", "--tournament", "x")
    assert code == 2 and "not both" in err


def test_json_outcome(run_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    code, out, err = _import(tmp_path, str(run_dir / "all_rounds.jsonl"), str(tmp_path / "bad.json"), "--json")
    assert code == 1
    data = json.loads(out)
    assert len(data["imported"]) == 6 and data["defaulted_scores"] == 2 and data["disagreements"] == 1
    assert sum(x["needs_review"] for x in data["imported"]) == 2
    assert data["imported"][0]["source"].endswith("all_rounds.jsonl:1")
    assert [p["where"] for p in data["problems"]] == [str(tmp_path / "bad.json")]
    code, out, _ = _import(tmp_path, str(run_dir / "all_rounds.jsonl"), "--json")
    assert code == 0 and json.loads(out)["imported"] == [] and len(json.loads(out)["already"]) == 6


def test_report_json_of_an_imported_run_matches_the_runner_table_and_names_the_import(
        run_dir: Path, tmp_path: Path) -> None:
    """The contract's path: import twice, then `ebtui report --json`'s criteria_by_model equals the runner's
    own table except where it defaulted a score (there n is one smaller and the mean is of the real scores)."""
    records = [json.loads(line) for line in (run_dir / "all_rounds.jsonl").read_text().splitlines()]
    for _ in range(2):
        code, _, err = _import(tmp_path, str(run_dir))
        assert code == 0, err
    store = str(tmp_path / "store")
    res = CliRunner().invoke(cli, ["report", "--json", "--store", store])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["n_rounds"] == len(records)
    got = {(c["model"], c["criterion"]): (c["raw_mean"], c["n"]) for c in out["criteria_by_model"] if c["n"]}
    published = _runner_table(records, keep_defaults=True)
    real = _runner_table(records, keep_defaults=False)
    defaulted = {(records[2]["team_b_model"], "intellectual_honesty"), (records[2]["team_b_model"], "consistency")}
    assert set(got) == set(published)
    for key, (mean, n) in published.items():
        if key in defaulted:
            assert got[key][1] == n - 1 and got[key][0] == pytest.approx(real[key][0], abs=0.01)
        else:
            assert got[key] == (pytest.approx(mean, abs=0.01), n)
    (imp,) = out["imported"]
    assert (imp["n_rounds"], imp["defaulted"], imp["disagreements"]) == (len(records), 2, 1)
    out_dir = tmp_path / "report"
    res = CliRunner().invoke(cli, ["report", "--store", store, "--out", str(out_dir)])
    assert res.exit_code == 0, res.output
    md = (out_dir / "report.md").read_text(encoding="utf-8")
    line = next(x for x in md.splitlines() if x.startswith("- Imported: "))
    assert "6 round(s) imported from" in line and "2 score(s) the runner defaulted to 5 are missing" in line


def _big_jsonl(path: Path, n: int) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for k in range(1, n + 1):
            a, b, j = MODELS[k % 3], MODELS[(k + 1) % 3], MODELS[(k + 2) % 3]
            fh.write(json.dumps(make_round(k, "lighthouse_keeper", a, b, j, {c: 7 for c in CRITERIA},
                                           {c: 6 for c in CRITERIA})) + "\n")
    return path


def _peak_import_bytes(tmp_path: Path, n: int) -> tuple[int, int]:
    """(traced peak bytes, rounds saved) of an import of n generated rounds with keep_rounds=False."""
    import gc
    import tracemalloc

    src = _big_jsonl(tmp_path / f"r{n}.jsonl", n)
    store = ResultsStore(tmp_path / f"s{n}", durable=False)
    store.CACHE_SIZE = 2  # the store's text cache of recent rounds is bounded (512) but would fill here
    gc.collect()
    tracemalloc.start()
    try:
        res = import_rounds([src], store, keep_rounds=False)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    store.close()
    assert not res.problems and not res.imported
    return peak, len(res.saved)


def test_import_streams_its_memory_does_not_grow_with_the_rounds(tmp_path: Path) -> None:
    """Four times the rounds (5.6 kB each on disk) cost at most a few kB more each (the store's index entry
    and one line of facts), not the records and Round objects themselves (≈ 50 kB a round before)."""
    _peak_import_bytes(tmp_path, 5)  # one-time costs (lazy imports, schemas, compiled patterns) out of the way
    small, n_small = _peak_import_bytes(tmp_path, 20)
    big, n_big = _peak_import_bytes(tmp_path, 80)
    assert (n_small, n_big) == (20, 80)
    per_round = (big - small) / (n_big - n_small)
    assert per_round < 16_000, f"{per_round:.0f} bytes more per round"  # ≈ 8 kB; ≈ 50 kB with the rounds kept


def test_keep_rounds_false_keeps_facts_not_rounds(run_dir: Path, tmp_path: Path) -> None:
    src = run_dir / "all_rounds.jsonl"
    kept = import_rounds([src], ResultsStore(tmp_path / "a"))
    lean = import_rounds([src], ResultsStore(tmp_path / "b"), keep_rounds=False)
    assert lean.imported == [] and len(lean.saved) == len(kept.imported) == 6
    assert [s.id for s in lean.saved] == [r.id for r in kept.imported]
    assert [s.needs_review for s in lean.saved] == [needs_review(r.judgment) for r in kept.imported]
    assert [s.source for s in lean.saved] == [f"{src}:{n}" for n in range(1, 7)]
    assert sum(s.defaulted for s in lean.saved) == sum(len(r.imported.defaulted) for r in kept.imported) > 0
