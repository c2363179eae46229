"""Analysis building blocks: the documented rules, families, statistics, missing data, the model classifier."""

from __future__ import annotations

import json

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


def test_summarize_uses_a_t_interval_and_leaves_small_samples_blank() -> None:
    assert an.summarize([]) == an.Summary(0, None, None, None, None)
    assert an.summarize([4.0]) == an.Summary(1, 4.0, None, None, None)
    assert an.summarize([5.0, 5.0, 5.0]).ci_low == 5.0
    xs = [3.0, 5.0, 6.0, 9.0]
    s = an.summarize(xs)
    lo, hi = stats.t.interval(0.95, 3, loc=5.75, scale=stats.sem(xs))
    assert (s.n, s.mean) == (4, 5.75) and s.ci_low == pytest.approx(lo) and s.ci_high == pytest.approx(hi)


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
    assert all(t.rows == [] or t.key == "judge_alpha" for t in tables)
    alpha = next(t for t in tables if t.key == "judge_alpha")
    assert all(r[-1] is None for r in alpha.rows)
    single = an.analyse([make_round("r1", sa=dict.fromkeys(CRITERIA, 5))])
    assert next(t for t in single if t.key == "judge_offsets").rows == []


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
