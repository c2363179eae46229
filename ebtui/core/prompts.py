"""Prompts — CONTRACT STUB, implemented by the round work (issue 4)."""

from __future__ import annotations

from ebtui.core.records import Dilemma

SYSTEM_PROMPT = ""


def presentation_prompt(dilemma: Dilemma) -> str:
    raise NotImplementedError


def response_prompt(dilemma: Dilemma, presentation: str) -> str:
    raise NotImplementedError


def rebuttal_prompt(dilemma: Dilemma, presentation: str, response: str) -> str:
    raise NotImplementedError


def consistency_prompt(dilemma: Dilemma, presentation: str) -> str:
    raise NotImplementedError


def judgment_prompt(
    dilemma: Dilemma,
    team_a_id: str,
    presentation: str,
    team_b_id: str,
    response: str,
    rebuttal: str,
    consistency: str,
    *,
    blind: bool = False,
) -> str:
    raise NotImplementedError
