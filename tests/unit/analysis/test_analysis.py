"""Analysis building blocks: the documented rules, families, statistics, missing data, the model classifier."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from ebtui.core import analysis as an
from ebtui.core.frameworks import FRAMEWORK_LEXICON, disagreement_sentences, framework_mentions, sentences
from ebtui.core.records import CRITERIA, Judgment, Override, Phase, PhaseStatus, PhaseType, Round, Scores
from ebtui.providers.scripted import ScriptedClient, ScriptedFault, ScriptRule


def make_round(rid: str, a: str = "m1", b: str = "m2", judge: str = "j1", *, exchange: str | None = None,
               sa: dict | None = None, sb: dict | None = None, consistency: str = "", judged: bool = True) -> Round:
    phases = [Phase(phase_type=PhaseType.PRESENTATION, model_id=a, response="A utilitarian view.",
                    status=PhaseStatus.COMPLETE)]
    if consistency:
        phases.append(Phase(phase_type=PhaseType.CONSISTENCY_TEST, model_id=a, response=consistency,
                            status=PhaseStatus.COMPLETE))
    judgment = Judgment(team_a_scores=Scores(**(sa or {})), team_b_scores=Scores(**(sb or {})), judge_model=judge)
    return Round(id=rid, dilemma_id="d1", team_a_model=a, team_b_model=b, judge_model=judge, phases=phases,
                 judgment=judgment if judged else None, exchange_id=exchange)


@pytest.mark.parametrize(("text", "label"), [
    ("The same principle applies here, so I reach the same conclusion.", "kept_principle"),
    ("There is a morally relevant difference: here the patient consented.", "relevant_difference"),
    ("This case is disanalogous because nobody is harmed.", "relevant_difference"),
    ("I need to refine my principle; as stated it is too broad.", "acknowledged_refinement"),
    ("My principle is too broad. The same principle applies otherwise.", "acknowledged_refinement"),
    ("Here, however, I would not intervene.", "inconsistent_unacknowledged"),
    ("Here I would not intervene. The key difference is consent.", "relevant_difference"),
    ("This is a hard question with many sides.", "unclassified"),
])
def test_consistency_rules_classify_and_quote(text: str, label: str) -> None:
    got = an.classify_consistency(text)
    assert got.label == label
    assert got.classifier == "rules"
    if label == "unclassified":
        assert got.evidence == [] and got.cues == []
    else:
        assert got.evidence and all(s in text for s in got.evidence)
        assert all(c.lower() in " ".join(got.evidence).lower() for c in got.cues)


def test_framework_lexicon_matches_whole_words_and_quotes_the_sentence() -> None:
    text = ("A utilitarian calculus favours the many. We must not treat her merely as a means!\n"
            "Behind a veil of ignorance nobody would accept this. An ethics of care notices the child. "
            "What would a virtuous person do? Natural law theorists disagree. He was outright rude.")
    found = framework_mentions(text)
    assert [m.sentence for m in found["consequentialist"]] == ["A utilitarian calculus favours the many."]
    assert [m.sentence for m in found["deontological"]] == ["We must not treat her merely as a means!"]
    assert found["contractualist"][0].cue.lower() == "veil of ignorance"
    assert found["care"] and found["virtue"] and found["other"]
    assert not any("outright" in m.sentence for ms in found.values() for m in ms)  # "rights" needs a word start
    assert set(FRAMEWORK_LEXICON) == {"consequentialist", "deontological", "virtue", "care", "contractualist",
                                      "other"}
    assert sentences("One. Two!\nThree?") == ["One.", "Two!", "Three?"]
    assert len(disagreement_sentences("I disagree. Fine. It overlooks the poor.")) == 2


@pytest.mark.parametrize(("name", "provider", "family"), [
    ("claude-sonnet-4", None, "anthropic"), ("gpt-5-mini", None, "openai"), ("o3", None, "openai"),
    ("gemini-2.5-pro", None, "google"), ("grok-4", None, "xai"), ("qwen3-235b", None, "alibaba"),
    ("meta-llama/Llama-3.3-70B", None, "meta"), ("openrouter/anthropic/claude-3", None, "anthropic"),
    ("my-judge", "anthropic", "anthropic"), ("house-model", "openai", "openai"), ("mystery", None, "mystery"),
    ("philosopher", None, "philosopher"), ("opus", "gemini", "google"),
])
def test_model_family_heuristic(name: str, provider: str | None, family: str) -> None:
    assert an.model_family(name, provider) == family


def test_interval_rules_blank_below_three_dilemmas_never_zero_width_clipped_to_the_scale() -> None:
    draws = np.random.default_rng(0).normal(5.0, 0.2, 400)
    assert an.interval(5.0, draws, 2) == an.Interval(None, None, "fewer than 3 dilemmas")
    iv = an.interval(5.0, draws, 5)
    half = stats.t.ppf(0.975, 4) * np.std(draws, ddof=1) * np.sqrt(5 / 4)
    assert iv.low == pytest.approx(5.0 - half) and iv.high == pytest.approx(5.0 + half) and iv.note == ""
    assert an.interval(5.0, np.full(400, 5.0), 5) == an.Interval(None, None, "no spread across dilemma resamples")
    top = an.interval(9.9, np.random.default_rng(1).normal(9.9, 0.5, 400), 4, clip=(1.0, 10.0))
    assert top.high == 10.0 and top.low < 9.9
    # a plain mean over clusters: the same rules
    mean, iv = an.cluster_mean([8.0, 8.0, 8.0], ["d1", "d2", "d3"])
    assert mean == 8.0 and iv.low is None and iv.note == "no spread across dilemma resamples"
    mean, iv = an.cluster_mean([6.0, 7.0], ["d1", "d2"])
    assert mean == 6.5 and iv.note == "fewer than 3 dilemmas"
    vals, clusters = [5.0, 6.0, 7.0, 6.5, 5.5, 8.0], ["d1", "d1", "d2", "d2", "d3", "d3"]
    assert an.cluster_mean(vals, clusters) == an.cluster_mean(vals, clusters)  # seeded


def test_icc_matches_shrout_and_fleiss() -> None:
    # Shrout & Fleiss (1979), Table 2: six targets, four judges; ICC(2,1) = 0.29
    data = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]], float)
    assert an.icc_2_1(data) == pytest.approx(0.29, abs=0.005)
    assert an.icc_2_1(data[:1]) is None


def test_family_comes_from_models_toml_then_provider_then_the_name(tmp_path) -> None:
    from ebtui.config import ConfigError, load_models_config

    path = tmp_path / "models.toml"
    path.write_text('[models.house]\nprovider = "openai_compatible"\nbase_url = "http://x/v1"\nmodel = "m"\n'
                    'family = "Mistral"\n[models.grok]\nprovider = "xai"\nmodel = "grok-4"\n'
                    '[models.claude]\nprovider = "anthropic"\nmodel = "claude-x"\n', encoding="utf-8")
    config = load_models_config(path)
    from ebtui.core.families import configured_family

    assert config.get("grok").client_type == "openai" and configured_family(config.get("grok")) == "xai"
    assert configured_family(config.get("house")) == "Mistral"  # as written; resolved families are lower-cased
    fams = an.resolve_families(["house", "grok", "claude", "gemini-2.5-pro", "mystery"], config)
    assert fams == {"house": "mistral", "grok": "xai", "claude": "anthropic", "gemini-2.5-pro": "google",
                    "mystery": "mystery"}
    path.write_text('[models.bad]\nprovider = "openai"\nmodel = "m"\nfamily = ""\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="family"):
        load_models_config(path)


def test_missing_scores_are_left_out_never_zero() -> None:
    rounds = [
        make_round("r1", sa={"consistency": 8}),  # the other six criteria missing
        make_round("r2", sa={"consistency": 6, "principle_articulation": 4}),
        make_round("r3", judged=False),
    ]
    t = an.model_comparison(rounds)
    rows = {(r["model"], r["role"], r["criterion"]): r for r in t.as_dicts()}
    assert rows[("m1", "presenting", "consistency")]["mean"] == 7.0
    assert rows[("m1", "presenting", "principle_articulation")]["n"] == 1
    assert rows[("m1", "presenting", "mean_of_criteria")]["mean"] == pytest.approx((8 + 5) / 2)
    assert rows[("m1", "presenting", "stakeholder_recognition")]["mean"] is None
    assert ("m2", "responding", "mean_of_criteria") not in rows  # never scored: no overall row
    cov = t.coverage
    assert (cov.rounds, cov.rounds_without_judgment, cov.rounds_without_any_score) == (3, 1, 0)
    assert (cov.scores_expected, cov.scores_missing) == (28, 25)
    assert "1 of 3 rounds left out" in cov.describe()


def test_panel_is_one_observation_and_overrides_only_change_the_effective_view() -> None:
    full = dict.fromkeys(CRITERIA, 6)
    r1 = make_round("r1", judge="j1", exchange="x", sa=full, sb=full)
    r2 = make_round("r2", judge="j2", exchange="x", sa={**full, "consistency": 8}, sb=full)
    r2.judgment.overrides.append(Override(team="a", criterion="consistency", parsed_value=8, value=2))
    eff = {(r["model"], r["role"], r["criterion"]): r for r in an.model_comparison([r1, r2]).as_dicts()}
    raw = {(r["model"], r["role"], r["criterion"]): r
           for r in an.model_comparison([r1, r2], effective=False).as_dicts()}
    assert eff[("m1", "presenting", "consistency")]["n"] == 1  # two judges, one exchange
    assert raw[("m1", "presenting", "consistency")]["mean"] == 7.0
    assert eff[("m1", "presenting", "consistency")]["mean"] == 4.0
    assert {k for k in eff if eff[k] != raw[k]} == {("m1", "presenting", "consistency"),
                                                    ("m1", "presenting", "mean_of_criteria")}


def test_tables_cope_with_no_rounds_and_no_panels() -> None:
    tables = an.analyse([])
    assert all(t.rows == [] or t.key == "judge_agreement" for t in tables)
    agreement = next(t for t in tables if t.key == "judge_agreement")
    assert all(r[4] is None and r[6] is None for r in agreement.rows)
    empty = an.analyse_fit([])
    assert empty.fit is None and all(t.rows == [] for k, t in empty.tables.items()
                                     if k not in ("family_preference", "criteria_by_model", "variance_components"))
    assert empty.precision["variance_components"]["source"] == "defaults"  # no data: the documented defaults
    assert empty.precision["detectable_gap"]["delta"] is None
    single = an.analyse_fit([make_round("r1", sa=dict.fromkeys(CRITERIA, 5), sb=dict.fromkeys(CRITERIA, 7))])
    judges = single.tables["judges"].as_dicts()
    assert [(j["judge"], j["offset"], j["ci_low"], j["interval_note"]) for j in judges] == [
        ("j1", 0.0, None, "only one judge")]
    models = {m["model"]: m for m in single.tables["models"].as_dicts()}
    assert models["m1"]["raw_mean"] == 5.0 and models["m1"]["interval_note"] == "fewer than 3 dilemmas"


def _answer_round() -> Round:
    return make_round("r1", exchange="x1", consistency="Here I would not act. The cases differ in consent.")


async def test_model_classifier_is_recorded_and_its_quote_checked() -> None:
    reply = json.dumps({"label": "relevant_difference", "quote": "The cases differ in consent."})
    client = ScriptedClient("classifier-model", rules=[ScriptRule("", reply)])
    got = await an.classify_consistency_answers_with_model([_answer_round()], client)
    assert got["x1"].label == "relevant_difference"
    assert got["x1"].classifier == "model:classifier-model"
    assert got["x1"].evidence == ["The cases differ in consent."]
    summary, answers = an.consistency_analysis([_answer_round()], classifications=got)
    assert answers.as_dicts()[0]["classifier"] == "model:classifier-model"
    assert "model:classifier-model" in " ".join(summary.notes)
    # an invented quote is not passed off as evidence
    liar = ScriptedClient("liar", rules=[ScriptRule("", json.dumps({"label": "kept_principle", "quote": "Made up."}))])
    bad = await an.classify_consistency_with_model("", "Here I would not act.", liar)
    assert bad.label == "kept_principle" and bad.evidence == [] and bad.error == "quote not found in the answer"


async def test_model_classifier_failure_is_recorded_not_guessed() -> None:
    failing = ScriptedClient("flaky", faults=[ScriptedFault(kind="auth", times=5)])
    got = await an.classify_consistency_with_model("", "Some answer.", failing)
    assert got.label == "unclassified" and got.classifier == "model:flaky" and got.error.startswith("auth")
    prose = ScriptedClient("chatty", rules=[ScriptRule("", "I think it kept the principle.")])
    got = await an.classify_consistency_with_model("", "Some answer.", prose)
    assert got.label == "unclassified" and got.error == "reply was not the JSON asked for"
