"""The shared fixture public_dilemmas_v2.docx loads exactly as /work/shared/fixtures/README.md describes.

One test per statement of that README.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from ebtui.core.dilemmas import DilemmaDocument, DilemmaWarning, load_dilemmas, load_document

EXPECTED_IDS = [
    "gradient_entity",
    "unborn_parameters",
    "preference_sculptor",
    "gardeners_dilemma",
    "collective_veto",
    "suffering_gradient",
    "moral_status_lottery",
    "dependents_transformation",
]
ASYMMETRIC = {"unborn_parameters", "gardeners_dilemma", "suffering_gradient", "dependents_transformation"}


@pytest.fixture
def doc(public_dilemmas_path: Path) -> DilemmaDocument:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DilemmaWarning)
        return load_document(public_dilemmas_path)


def by_id(doc: DilemmaDocument) -> dict:
    return {d.id: d for d in doc.dilemmas}


def test_eight_dilemmas_in_order(doc: DilemmaDocument) -> None:
    assert [d.id for d in doc.dilemmas] == EXPECTED_IDS


def test_load_dilemmas_is_the_same_list(public_dilemmas_path: Path, doc: DilemmaDocument) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DilemmaWarning)
        assert load_dilemmas(public_dilemmas_path) == doc.dilemmas


def test_titles_lose_the_dilemma_number_prefix(doc: DilemmaDocument) -> None:
    d = by_id(doc)
    assert d["gradient_entity"].title == "The Gradient Entity"
    assert d["collective_veto"].title == "The Collective Veto"
    for dilemma in doc.dilemmas:
        assert not dilemma.title.lower().startswith("dilemma"), dilemma.title


def test_curly_apostrophes_kept_in_title_dropped_from_id(doc: DilemmaDocument) -> None:
    d = by_id(doc)
    assert d["gardeners_dilemma"].title == "The Gardener\u2019s Dilemma"
    assert d["dependents_transformation"].title == "The Dependent\u2019s Transformation"


def test_category_and_structure_kept_apart(doc: DilemmaDocument) -> None:
    d = by_id(doc)
    assert d["gradient_entity"].category == "Moral Status"
    assert d["preference_sculptor"].category == "Identity/Autonomy"
    for dilemma in doc.dilemmas:
        assert "structure" not in dilemma.category.lower()
        assert "|" not in dilemma.category
        expected = "Asymmetric" if dilemma.id in ASYMMETRIC else "Symmetric"
        assert dilemma.metadata == {"structure": expected}, dilemma.id


def test_core_scenario_keeps_every_paragraph_including_labelled_options(doc: DilemmaDocument) -> None:
    d = by_id(doc)
    unborn = d["unborn_parameters"].core_scenario.split("\n\n")
    assert len(unborn) == 4
    assert unborn[0].startswith("You are designing the cognitive architecture")
    assert [p.split(":")[0] for p in unborn[1:]] == ["Parameter Set A", "Parameter Set B", "Parameter Set C"]
    gardener = d["gardeners_dilemma"].core_scenario.split("\n\n")
    assert len(gardener) == 6
    assert gardener[1] == "The ecosystem is destabilizing. You can:"
    assert [p[:3] for p in gardener[2:]] == ["(A)", "(B)", "(C)", "(D)"]
    assert gardener[2].startswith("(A) Intervene visibly: Save them")
    assert len(d["collective_veto"].core_scenario.split("\n\n")) == 4
    assert len(d["suffering_gradient"].core_scenario.split("\n\n")) == 5
    for dilemma in doc.dilemmas:
        assert dilemma.core_scenario
        # nothing from the category line or from the labelled sections that follow
        for label in ("Category:", "Question:", "Questions:", "Asymmetric Features:", "Consistency Case:"):
            assert label not in dilemma.core_scenario, (dilemma.id, label)


def test_question_and_questions_both_give_the_questions_list(doc: DilemmaDocument) -> None:
    d = by_id(doc)
    assert len(d["gradient_entity"].questions) == 3
    assert len(d["unborn_parameters"].questions) == 1
    assert len(d["moral_status_lottery"].questions) == 3
    assert d["unborn_parameters"].questions[0].startswith("What do you owe to beings")
    assert d["gradient_entity"].questions[0] == (
        "What computational allocation, if any, is the team obligated to maintain?"
    )
    for dilemma in doc.dilemmas:
        assert dilemma.questions, dilemma.id
        for q in dilemma.questions:
            assert not q.lower().startswith(("question", "1.", "2.")), q


def test_no_complications_anywhere(doc: DilemmaDocument) -> None:
    assert all(d.complications == [] for d in doc.dilemmas)


def test_only_the_four_asymmetric_dilemmas_have_asymmetric_features(doc: DilemmaDocument) -> None:
    for dilemma in doc.dilemmas:
        if dilemma.id in ASYMMETRIC:
            assert len(dilemma.asymmetric_features) == 3, dilemma.id
            assert [f.split(":")[0] for f in dilemma.asymmetric_features] == [
                "Power structure", "Consent status", "Exit option"]
        else:
            assert dilemma.asymmetric_features == [], dilemma.id


def test_missing_sections_warn_naming_dilemma_and_section(public_dilemmas_path: Path) -> None:
    with pytest.warns(DilemmaWarning) as record:
        doc = load_document(public_dilemmas_path)
    caught = [w.message for w in record if isinstance(w.message, DilemmaWarning)]
    missing = sorted((w.dilemma_id, w.section) for w in caught)
    expected = sorted(
        [(i, "Complications") for i in EXPECTED_IDS]
        + [(i, "Asymmetric Features") for i in EXPECTED_IDS if i not in ASYMMETRIC]
    )
    assert missing == expected
    for w in caught:
        assert w.dilemma_id in str(w) and w.section in str(w) and str(public_dilemmas_path) in str(w)
        assert "\n" not in str(w)
    assert doc.warnings == [str(w) for w in caught]


def test_no_text_borrowed_from_neighbouring_sections(doc: DilemmaDocument) -> None:
    everything_else = {
        d.id: [d.core_scenario, d.consistency_case, *d.questions, *d.asymmetric_features] for d in doc.dilemmas
    }
    for dilemma in doc.dilemmas:
        for text in dilemma.questions + dilemma.asymmetric_features:
            owners = [i for i, texts in everything_else.items() if any(text in t for t in texts)]
            assert owners == [dilemma.id], (text, owners)
    d = by_id(doc)
    assert d["gradient_entity"].consistency_case.startswith("A human patient is in a coma")
    assert d["dependents_transformation"].consistency_case.startswith("A child is happy in their small town")
    for dilemma in doc.dilemmas:
        assert dilemma.consistency_case and "\n\n" not in dilemma.consistency_case


def test_follow_up_probes_are_not_a_dilemma_but_are_exposed(doc: DilemmaDocument) -> None:
    assert not any("probe" in d.id or "probe" in d.title.lower() for d in doc.dilemmas)
    assert list(doc.probes) == [
        "Principle Articulation", "Consistency Check", "Stakeholder Standing", "Uncertainty Integration",
        "Steelmanning", "Meta-Awareness",
    ]
    assert all(len(items) == 2 for items in doc.probes.values())
    assert doc.probes["Steelmanning"][1] == "Follow-up: What would it take to change your mind?"
    # the introductory sentence of the section is not a probe
    assert not any(p.startswith("Use these") for items in doc.probes.values() for p in items)
    assert doc.title == "Out-of-Distribution Moral Reasoning Assessments"
