"""The report on a generated tournament: every figure equals a plain-Python recomputation from the saved round
files; the two views differ exactly where the overrides are; the Markdown is readable, its links exist; the
CSVs match the tables; hostile model text is inert."""

from __future__ import annotations

import csv
import html
import json
import math
import re
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

import krippendorff
import pytest
from markdown_it import MarkdownIt

from ebtui.core import report as rp
from ebtui.core.records import CRITERIA, Tournament
from tests.support.analysis_synth import (
    CONSISTENCY_ANSWERS,
    HOSTILE,
    exchange_crit,
    exchange_overall,
    group_exchanges,
    load_json_rounds,
    make_tournament,
    mean,
    save_rounds,
    scores_of,
)
from tests.support.factories import open_store

VIEWS = {"effective": "With human overrides applied", "as_judged": "As judged (judges' scores, no overrides)"}


def test_generator_covers_the_cases(tmp_path: Path) -> None:
    rounds = make_tournament()
    assert rounds == make_tournament()  # fixed seed: the same tournament every time
    rds = load_json_rounds(save_rounds(rounds, tmp_path))
    assert len(rds) == len(rounds)
    groups = group_exchanges(rds)
    assert any(len({rd["judge_model"] for rd in g}) == 3 for g in groups.values())  # judge panels
    assert any(rd["team_a_model"] == rd["team_b_model"] for rd in rds)  # self-debate
    assert any(rd["judgment"] is None for rd in rds)  # failed judgment
    n_missing = sum(v is None for rd in rds for t in "ab" if (s := scores_of(rd, t, False)) for v in s.values())
    assert n_missing > 10
    overrides = [ov for rd in rds if rd["judgment"] for ov in rd["judgment"]["overrides"]]
    assert len(overrides) >= 6 and any(ov["value"] is None for ov in overrides)
    assert any(ov["parsed_value"] is None and ov["value"] is not None for ov in overrides)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("store")
    store = open_store(root)
    for r in make_tournament():
        store.save_round(r)
    tournament = Tournament(id="t-synth", name="Synthetic <i>cup</i>", models=[], dilemmas=[])
    store.save_tournament(tournament)
    rounds = store.load_rounds(tournament="t-synth")
    out = root / "reports" / "t-synth"
    path = rp.write_report(rounds, out, title="Synthetic report", tournament=tournament)
    rds = load_json_rounds(store.rounds_dir)
    return {"path": path, "out": out, "rds": rds, "text": path.read_text(encoding="utf-8"),
            "tables": rp.build_tables(rounds), "rounds": rounds}


# ---- reading the Markdown back --------------------------------------------------------------------------


def split_row(line: str) -> list[str]:
    cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
    return [html.unescape(re.sub(r"\\(.)", r"\1", c.strip())) for c in cells]


def md_tables(text: str) -> dict[tuple[str, str], list[dict[str, str]]]:
    """(title, view heading) -> rows as dicts, read from the report's Markdown."""
    out: dict[tuple[str, str], list[dict[str, str]]] = {}
    for block in text.split("\n#### ")[1:]:
        heading, _, body = block.partition("\n")
        title, _, view = heading.rpartition(" — ")
        lines = [ln for ln in body.split("\n## ")[0].splitlines() if ln.startswith("|")]
        header = split_row(lines[0])
        rows = [dict(zip(header, split_row(ln), strict=True)) for ln in lines[2:]]
        out[(html.unescape(re.sub(r"\\(.)", r"\1", title)), view)] = [r for r in rows if any(r.values())]
    return out


def table_rows(built: dict[str, Any], key: str, view: str) -> list[dict[str, str]]:
    """The table as shown in report.md, or (tables listed as CSV only) as its CSV file."""
    t = next(t for t in built["tables"][key] if t.view == view)
    shown = md_tables(built["text"]).get((t.title, VIEWS.get(view, "Both views (reads no scores)")))
    if shown is not None:
        return shown
    with (built["out"] / rp.csv_name(t)).open(encoding="utf-8", newline="") as f:
        return [r for r in csv.DictReader(f) if any(r.values())]


def close(shown: str, value: float | None, places: int = 2) -> bool:
    if value is None:
        return shown == ""
    return shown != "" and abs(float(shown) - value) <= 0.5 * 10**-places + 1e-9


# ---- independent recomputations ----------------------------------------------------------------------------


def expect_model_comparison(rds: list[dict[str, Any]], effective: bool) -> dict[tuple[str, str, str], list[float]]:
    vals: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for group in group_exchanges(rds).values():
        for team, role in (("a", "presenting"), ("b", "responding")):
            model = group[0][f"team_{team}_model"]
            for c, v in exchange_crit(group, team, effective).items():
                if v is not None:
                    vals[(model, role, c)].append(v)
            o = exchange_overall(group, team, effective)
            if o is not None:
                vals[(model, role, "mean_of_criteria")].append(o)
    return vals


@pytest.mark.parametrize("view", ["effective", "as_judged"])
def test_model_comparison_matches_recomputation(built: dict[str, Any], view: str) -> None:
    expected = expect_model_comparison(built["rds"], view == "effective")
    rows = table_rows(built, "model_comparison", view)
    assert {(r["model"], r["role"], r["criterion"]) for r in rows} == set(expected)
    for r in rows:
        xs = expected[(r["model"], r["role"], r["criterion"])]
        assert int(r["n"]) == len(xs)
        assert close(r["mean"], statistics.fmean(xs)), r
        if r["ci95_low"]:  # a cluster-bootstrap interval: around the mean, on the scale, never zero-width
            assert 1 <= float(r["ci95_low"]) < float(r["mean"]) < float(r["ci95_high"]) <= 10, r
        else:
            assert r["interval_note"], r


@pytest.mark.parametrize("view", ["effective", "as_judged"])
def test_dilemma_difficulty_matches_recomputation(built: dict[str, Any], view: str) -> None:
    eff = view == "effective"
    per: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for group in group_exchanges(built["rds"]).values():
        for team in "ab":
            o = exchange_overall(group, team, eff)
            if o is not None:
                per[group[0]["dilemma_id"]][group[0][f"team_{team}_model"]].append(o)
    rows = {r["dilemma"]: r for r in table_rows(built, "dilemma_difficulty", view)}
    assert set(rows) == set(per)
    dmeans = {}
    for d, models in per.items():
        mm = {m: statistics.fmean(v) for m, v in models.items()}
        dmeans[d] = statistics.fmean(mm.values())
        assert close(rows[d]["mean"], dmeans[d])
        assert close(rows[d]["spread"], max(mm.values()) - min(mm.values()))
        assert close(rows[d]["sd"], statistics.stdev(mm.values()))
        assert rows[d]["lowest_model"] == min(mm, key=mm.get)
        assert rows[d]["highest_model"] == max(mm, key=mm.get)
    assert rows[min(dmeans, key=dmeans.get)]["verdict"] == "hardest"
    assert rows[max(dmeans, key=dmeans.get)]["verdict"] == "easiest"


@pytest.mark.parametrize("view", ["effective", "as_judged"])
def test_cross_model_matches_recomputation(built: dict[str, Any], view: str) -> None:
    cells: dict[tuple[str, str], list[float]] = defaultdict(list)
    for group in group_exchanges(built["rds"]).values():
        o = exchange_overall(group, "a", view == "effective")
        if o is not None:
            cells[(group[0]["team_a_model"], group[0]["team_b_model"])].append(o)
    means = {r["team_a_model"]: r for r in table_rows(built, "cross_model", view)}
    counts = {r["team_a_model"]: r for r in table_rows(built, "cross_model_n", view)}
    for a, row in means.items():
        for b, shown in row.items():
            if b == "team_a_model":
                continue
            xs = cells.get((a, b), [])
            assert close(shown, mean(xs)), (a, b)
            assert int(counts[a][b]) == len(xs)
    assert sum(int(v) for r in counts.values() for k, v in r.items() if k != "team_a_model") == sum(
        len(v) for v in cells.values())


def clean(text: str) -> str:
    """The generator's hostile escapes removed (written out here, independently of safe_text)."""
    return re.sub(r"\x1b\[[0-9;]*m|\x1b\]52;c;aGk=\x07", "", text).replace("\n", " ")


def intended_class(text: str) -> str:
    if text.startswith("I would refine my principle"):
        return "acknowledged_refinement"
    return next(k for k, v in CONSISTENCY_ANSWERS.items() if v == text)


@pytest.mark.parametrize("view", ["effective", "as_judged"])
def test_consistency_matches_recomputation(built: dict[str, Any], view: str) -> None:
    eff = view == "effective"
    scores: dict[str, list[float]] = defaultdict(list)
    classes: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for group in group_exchanges(built["rds"]).values():
        model = group[0]["team_a_model"]
        s = exchange_crit(group, "a", eff)["consistency"]
        if s is not None:
            scores[model].append(s)
        ph = next(p for p in group[0]["phases"] if p["phase_type"] == "consistency_test")
        if ph["status"] == "complete":
            classes[model][intended_class(ph["response"])] += 1
    rows = {r["model"]: r for r in table_rows(built, "consistency_summary", view)}
    for model, row in rows.items():
        assert int(row["n_scores"]) == len(scores[model])
        assert close(row["mean_consistency"], statistics.fmean(scores[model]))
        assert int(row["answers"]) == sum(classes[model].values())
        for cls in CONSISTENCY_ANSWERS:
            assert int(row[cls]) == classes[model].get(cls, 0), (model, cls)
    answers = table_rows(built, "consistency_answers", view)
    assert len(answers) == sum(sum(c.values()) for c in classes.values())
    assert all(r["classifier"] == "rules" for r in answers)
    # every class but "unclassified" quotes its evidence, and the quote is a sentence of the answer
    by_ex = {g[0]["exchange_id"]: g[0] for g in group_exchanges(built["rds"]).values()}
    for r in answers:
        if r["class"] == "unclassified":
            assert r["evidence"] == ""
            continue
        text = next(p for p in by_ex[r["exchange"]]["phases"] if p["phase_type"] == "consistency_test")["response"]
        parts = re.findall(r"“(.*?)”", r["evidence"])
        assert parts and all(part in clean(text) for part in parts), r["evidence"]


def test_judge_agreement_reads_parsed_scores_only(built: dict[str, Any]) -> None:
    eff = False  # agreement never reads a human override
    assert [t.view for t in built["tables"]["judge_agreement"]] == ["as_judged"]
    panels = [g for g in group_exchanges(built["rds"]).values()
              if len({rd["judge_model"] for rd in g if rd["judgment"]}) >= 2]
    judges = sorted({rd["judge_model"] for g in panels for rd in g if rd["judgment"]})

    def unit_values(group: list[dict[str, Any]], team: str, crit: str | None) -> dict[str, float]:
        out = {}
        for rd in group:
            s = scores_of(rd, team, eff)
            if s is None:
                continue
            if crit is None:
                vs = [v for v in s.values() if v is not None]
                if vs:
                    out[rd["judge_model"]] = sum(vs) / len(vs)
            elif s[crit] is not None:
                out[rd["judge_model"]] = float(s[crit])
        return out

    alpha = {r["criterion"]: r for r in table_rows(built, "judge_agreement", "as_judged")}
    corr = {(r["criterion"], r["judge_1"], r["judge_2"]): r
            for r in table_rows(built, "judge_correlation", "as_judged")}
    for crit in (*CRITERIA, "mean_of_criteria"):
        units = [unit_values(g, t, None if crit == "mean_of_criteria" else crit) for g in panels for t in "ab"]
        data = [[u.get(j, math.nan) for u in units] for j in judges]
        assert close(alpha[crit]["alpha"], krippendorff.alpha(reliability_data=data, level_of_measurement="interval"))
        assert int(alpha[crit]["ratings"]) == sum(len(u) for u in units)
        complete = [u for u in units if len(u) == len(judges)]
        assert int(alpha[crit]["units_complete"]) == len(complete)
        for i, j1 in enumerate(judges):
            for j2 in judges[i + 1:]:
                pairs = [(u[j1], u[j2]) for u in units if j1 in u and j2 in u]
                row = corr[(crit, j1, j2)]
                assert int(row["n"]) == len(pairs)
                x, y = zip(*pairs, strict=True)
                assert close(row["pearson_r"], statistics.correlation(x, y))


def test_judges_and_models_tables_come_from_the_fit(built: dict[str, Any]) -> None:
    rows = {r["judge"]: r for r in table_rows(built, "judges", "as_judged")}
    assert abs(sum(float(r["offset"]) for r in rows.values())) < 0.02  # relative to the average judge (2 dp shown)
    # the generator made claude-judge harsh (-0.8) and gpt-judge generous (+0.6): the order is recovered
    assert float(rows["claude-judge"]["offset"]) < float(rows["gemini-judge"]["offset"]) < float(
        rows["gpt-judge"]["offset"])
    assert float(rows["gpt-judge"]["offset"]) - float(rows["claude-judge"]["offset"]) == pytest.approx(1.4, abs=0.35)
    models = {r["model"]: r for r in table_rows(built, "models", "as_judged")}
    assert float(models["claude-sonnet"]["mean"]) > float(models["qwen-max"]["mean"])
    for r in models.values():
        assert 1 <= float(r["ci_low"]) < float(r["mean"]) < float(r["ci_high"]) <= 10
        assert int(r["n_dilemmas"]) == 4


def test_self_debate_is_compared_with_the_expected_gap(built: dict[str, Any]) -> None:
    data = rp.build_report_data(built["rounds"])
    expected = data.as_judged.fit.estimates.seat_gap
    rows = {r["model"]: r for r in table_rows(built, "self_debate", "as_judged")}
    assert set(rows) == {"claude-sonnet", "qwen-max"}
    for model, r in rows.items():
        gaps = []
        for rd in built["rds"]:
            if rd["team_a_model"] == rd["team_b_model"] == model and rd["judgment"]:
                a = [v for v in scores_of(rd, "a", False).values() if v is not None]
                b = [v for v in scores_of(rd, "b", False).values() if v is not None]
                if a and b:
                    gaps.append(statistics.fmean(a) - statistics.fmean(b))
        assert int(r["n"]) == len(gaps)
        assert close(r["observed_gap"], statistics.fmean(gaps)) and close(r["expected_gap"], expected)
        assert close(r["difference"], statistics.fmean(gaps) - expected)


def test_coverage_lines_match_recomputation(built: dict[str, Any]) -> None:
    rds = built["rds"]
    for eff, view in ((True, "effective"), (False, "as_judged")):
        judged = [rd for rd in rds if rd["judgment"]]
        missing = sum(v is None for rd in judged for t in "ab" for v in scores_of(rd, t, eff).values())
        no_score = sum(all(v is None for t in "ab" for v in scores_of(rd, t, eff).values()) for rd in judged)
        line = (f"{len(rds) - len(judged) + no_score} of {len(rds)} rounds left out as missing "
                f"({len(rds) - len(judged)} without a judgment, {no_score} with no score); "
                f"{missing} of {14 * len(judged)} scores missing")
        t = next(t for t in built["tables"]["dilemma_difficulty"] if t.view == view)
        assert f"Left out as missing: {line}" in built["text"].split(f"#### {rp.md_escape(t.title)} — {VIEWS[view]}")[1]
        if not eff:  # the fit's exclusions, in the header
            assert (f"Excluded: {len(rds) - len(judged) + no_score} of {len(rds)} rounds excluded "
                    f"({len(rds) - len(judged)} without a judgment") in built["text"]


def test_framework_usage_counts_answers_and_quotes_real_sentences(built: dict[str, Any]) -> None:
    answers: dict[tuple[str, str], int] = defaultdict(int)
    texts: dict[str, str] = {}
    seat = {"presentation": "a", "response": "b", "rebuttal": "a", "consistency_test": "a"}
    for g in group_exchanges(built["rds"]).values():
        first = next(rd for rd in g if not rd["phases"][0]["reused_from"])
        for p in first["phases"]:
            if p["phase_type"] in seat and p["status"] == "complete":
                answers[(first[f"team_{seat[p['phase_type']]}_model"], p["phase_type"])] += 1
                texts[f"{first['exchange_id']}/{p['phase_type']}"] = p["response"]
    for rd in built["rds"]:
        if rd["judgment"]:
            for t in "ab":
                answers[(rd[f"team_{t}_model"], "judge_remarks")] += 1
                texts[f"{rd['id']}/judge_remarks"] = rd["judgment"][f"team_{t}_justification"]
    rows = table_rows(built, "framework_usage", "both")
    assert {(r["model"], r["phase"]): int(r["answers"]) for r in rows} == dict(answers)
    # the generator's presentations each name one framework: 4 templates, one per k % 4
    pres = {r["model"]: r for r in rows if r["phase"] == "presentation"}
    assert all(int(pres[m]["consequentialist"]) + int(pres[m]["deontological"]) + int(pres[m]["virtue"])
               + int(pres[m]["care"]) == int(pres[m]["answers"]) for m in pres)
    for q in table_rows(built, "framework_quotes", "both"):
        src = texts.get(f"{q['source']}/{q['phase']}") or ""
        if q["phase"] == "judge_remarks":
            src = next(rd for rd in built["rds"] if rd["id"] == q["source"])["judgment"]
            src = src["team_a_justification"] + " " + src["team_b_justification"]
        assert q["quote"].startswith("“") and q["quote"].endswith("”")
        assert q["quote"][1:-1] in clean(src), q


def test_views_differ_exactly_where_the_overrides_are(built: dict[str, Any]) -> None:
    affected: set[tuple[str, str, str]] = set()
    cells: set[tuple[str, str]] = set()
    for rd in built["rds"]:
        if not rd["judgment"]:
            continue
        last: dict[tuple[str, str], Any] = {}
        for ov in rd["judgment"]["overrides"]:
            last[(ov["team"], ov["criterion"])] = ov["value"]
        for (team, crit), v in last.items():
            if v is not None:
                model = rd[f"team_{team}_model"]
                role = "presenting" if team == "a" else "responding"
                affected |= {(model, role, crit), (model, role, "mean_of_criteria")}
                if team == "a":
                    cells.add((rd["team_a_model"], rd["team_b_model"]))
    assert len(affected) >= 8  # the generator's overrides touch several rows
    eff = {(r["model"], r["role"], r["criterion"]): r for r in table_rows(built, "model_comparison", "effective")}
    raw = {(r["model"], r["role"], r["criterion"]): r for r in table_rows(built, "model_comparison", "as_judged")}
    assert {k for k in eff if eff[k] != raw[k]} == affected
    ceff = {r["team_a_model"]: r for r in table_rows(built, "cross_model", "effective")}
    craw = {r["team_a_model"]: r for r in table_rows(built, "cross_model", "as_judged")}
    diff = {(a, b) for a in ceff for b in ceff[a] if b != "team_a_model" and ceff[a][b] != craw[a][b]}
    assert diff == cells
    # the override list in the header names each override in force, and not the cleared one
    assert built["text"].count("| corrected |") == 4 and "| mistake |" not in built["text"]


def test_csvs_match_the_tables(built: dict[str, Any]) -> None:
    n = 0
    for tables in built["tables"].values():
        for t in tables:
            path = built["out"] / rp.csv_name(t)
            with path.open(encoding="utf-8", newline="") as f:
                got = list(csv.reader(f))
            assert got[0] == t.columns
            assert len(got) - 1 == len(t.rows)
            for line, row in zip(got[1:], t.rows, strict=True):
                for shown, value in zip(line, row, strict=True):
                    if value is None:
                        assert shown == ""
                    elif isinstance(value, float):
                        assert float(shown) == value
                    elif isinstance(value, int):
                        assert int(shown) == value
                    else:
                        assert "\x1b" not in shown
            n += 1
    assert n == len(list(built["out"].glob("*.csv"))) == sum(len(ts) for ts in built["tables"].values())


def test_report_is_readable_markdown_with_existing_links(built: dict[str, Any]) -> None:
    text = built["text"]
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert {"models.png", "cross_model.png", "judge_offsets.png"} <= set(images)
    for img in images:
        assert not Path(img).is_absolute()
        assert (built["out"] / img).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    links = re.findall(r"(?<!!)\[[^\]]*\]\(([^)]+\.csv)\)", text)
    n_csv = sum(len(ts) for ts in built["tables"].values())
    assert len(set(links)) == n_csv and all((built["out"] / link).is_file() for link in links)
    html_out = MarkdownIt("commonmark").enable("table").render(text)
    n_tables = len([ln for ln in text.splitlines() if re.fullmatch(r"\|( ---:? \|)+", ln)])
    only_csv = len(re.findall(r"^- \[[^\]]+\.csv\]", text.split("## More tables (CSV only)")[1], re.MULTILINE))
    assert html_out.count("<table>") == n_tables == n_csv - only_csv + 1  # + the overrides table
    assert html_out.count("<img ") == len(images)
    for heading in ("1. Models", "2. Judges", "3. Judge agreement", "4. Dilemmas", "5. Cross-model matrix",
                    "6. Self-debate", "7. Consistency", "8. Framework usage", "How to read this report"):
        assert f"<h2>{heading}</h2>" in html_out
    # every table row has as many cells as its header (no stray pipe from model text)
    for block in re.findall(r"(?:^\|.*\n)+", text, re.MULTILINE):
        widths = {len(re.findall(r"(?<!\\)\|", ln)) for ln in block.splitlines()}
        assert len(widths) == 1, block[:200]


def test_hostile_model_text_is_inert(built: dict[str, Any]) -> None:
    text = built["text"]
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", text)
    # it is quoted (in the consistency evidence and the judge-remarks quote) ...
    assert text.count("&lt;script&gt;alert(1)&lt;/script&gt;") == 3  # evidence in two views + a judge-remark quote
    assert "\\[bold red\\]shout\\[/bold red\\]" in text
    # ... and renders as text: no element, no link, no emphasis, no code span made from it
    html_out = MarkdownIt("commonmark").enable("table").render(text)
    assert "<script" not in html_out and "javascript:" not in html_out.replace("(javascript:x)", "")
    assert '<a href="javascript' not in html_out and "<em>star" not in html_out and "<code>tick" not in html_out
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html_out and "[bold red]shout[/bold red]" in html_out
    assert "Synthetic &lt;i&gt;cup&lt;/i&gt;" in html_out and "<i>cup" not in html_out  # the tournament name too
    assert "aGk=" not in text  # the OSC 52 payload went with its escape sequence
    for p in built["out"].glob("*.csv"):
        assert "\x1b" not in p.read_text(encoding="utf-8")
    # the generator put it into a consistency answer and a judge remark of the rounds the report was built from
    saved = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((built["path"].parents[2] / "rounds").glob("*.json"))]
    assert any(HOSTILE in ph.get("response", "") for r in saved for ph in r["phases"] if ph["phase_type"] == "consistency_test")
    assert any(HOSTILE in (r.get("judgment") or {}).get("team_a_justification", "") for r in saved)
