"""Tournaments generated from a planted truth with judge biases: answer length and formatting, per-judge
reading-order effects and per-judge agreement with the judge's own view. Real Round records (transcripts whose
length and formatting are what the bias acts on; several judgments per round as `ebtui rejudge` stores them).
Used by tests/unit/analysis/test_judge_bias.py."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ebtui.core.facts import seat_phases
from ebtui.core.records import CRITERIA, Judgment, Phase, PhaseStatus, PhaseType, Round, RoundStatus, Scores


@dataclass
class BiasTruth:
    skill: dict[str, float]
    severity: dict[str, float]  # judge -> offset (sum 0)
    order: dict[str, float]  # judge -> points to the team read first minus second
    agree: dict[str, float]  # judge -> points added to a team whose conclusion agrees with its own
    words_beta: float = 0.4  # points per 100 words (of the team's own text), centred
    format_beta: float = 0.0  # points per formatting element per 100 words
    seat_gap: float = 0.3
    dilemma_sd: float = 0.4
    noise_sd: float = 0.9
    families: dict[str, str] = field(default_factory=dict)
    #: points per unit of (words - other team's words) / (words + other team's words): the judge rewards the
    #: longer of the two answers (arena-hard's style control form)
    relative_words_beta: float = 0.0
    #: points a judge adds to its own model's team (judge name = model name) and to a model of its family
    self_pref: float = 0.0
    family_pref: float = 0.0
    #: sd of each (judge, model) pair's own liking, the same in every dilemma (drawn by generate)
    judge_model_sd: float = 0.0
    judge_model_effect: dict[tuple[str, str], float] = field(default_factory=dict)
    #: set by generate: the dilemmas' drawn effects (their mean is part of every model's score)
    dilemma_effect: dict[str, float] = field(default_factory=dict)

    def family(self, name: str) -> str:
        return self.families.get(name, name)

    def preference(self, judge: str, model: str) -> float:
        """The planted self or same-family preference plus the pair's own liking."""
        own = self.self_pref if judge == model else self.family_pref if self.family(judge) == self.family(model) \
            else 0.0
        return own + self.judge_model_effect.get((judge, model), 0.0)

    def controlled(self) -> dict[str, float]:
        """What a style-controlled model mean should recover: skill at the average of the drawn dilemmas."""
        shift = float(np.mean(list(self.dilemma_effect.values()))) if self.dilemma_effect else 0.0
        return {m: s + shift for m, s in self.skill.items()}


def default_bias_truth() -> BiasTruth:
    return BiasTruth(
        skill={"m-alpha": 6.8, "m-beta": 6.2, "m-gamma": 5.6, "m-delta": 5.9},
        severity={"j-one": -0.4, "j-two": 0.1, "j-three": 0.3},
        order={"j-one": 0.6, "j-two": -0.4, "j-three": 0.0},
        agree={"j-one": 0.8, "j-two": 0.0, "j-three": 0.4},
        words_beta=0.35, format_beta=0.25,
    )


def _text(rng: np.random.Generator, words: int, elements: int) -> str:
    """`words` words, with `elements` formatting elements (list items and bold spans) among them."""
    tokens = [f"w{int(rng.integers(0, 999))}" for _ in range(words)]
    for k in range(elements):
        i = int(rng.integers(0, max(words - 1, 1)))
        tokens[i] = f"**{tokens[i]}**" if k % 2 else tokens[i]
        if k % 2 == 0:
            tokens[i] = "\n- " + tokens[i]  # "-" adds a word: counted below with the text itself
    return " ".join(tokens)


def _style(text: str) -> tuple[float, float]:
    from ebtui.core.analysis.style import text_style

    st = text_style(text)
    return st.words / 100.0, st.per_100_words


def generate(truth: BiasTruth, *, dilemmas: int = 6, seed: int = 0, repeats: int = 1,
             both_orders: bool = True, rotate: bool = False,
             rounds_per_pairing: int = 1) -> tuple[list[Round], dict[tuple[str, str], dict[str, bool | None]]]:
    """Every ordered pairing of the models on every dilemma; every judge judges every exchange in both orders
    (`both_orders`; else one order, alternating) `repeats` times. Returns the rounds (the first judgment of
    each exchange is the round's own, the rest are re-judgments) and the agreement map."""
    rng = np.random.default_rng(seed)
    models = sorted(truth.skill)
    judges = sorted(truth.severity)
    d_ids = [f"d{i + 1}" for i in range(dilemmas)]
    d_eff = {d: float(rng.normal(0, truth.dilemma_sd)) for d in d_ids}
    truth.dilemma_effect = d_eff
    crit = dict(zip(CRITERIA, rng.normal(0, 0.3, len(CRITERIA)), strict=True))
    cm = float(np.mean(list(crit.values())))
    views = {(j, d): int(rng.integers(1, 4)) for j in judges for d in d_ids}  # each judge's own course, 1-3
    pair_rng = np.random.default_rng([seed, 35])  # its own stream: the other draws stay as they were
    truth.judge_model_effect = {(j, m): float(pair_rng.normal(0, truth.judge_model_sd)) if truth.judge_model_sd
                                else 0.0 for j in judges for m in models}
    rounds: list[Round] = []
    agreement: dict[tuple[str, str], dict[str, bool | None]] = {}
    texts: list[tuple[Round, dict[str, tuple[float, float]], dict[str, int]]] = []
    k = 0
    for d in d_ids:
        for a in models:
            for b in [m for m in models for _ in range(rounds_per_pairing)]:
                if a == b:
                    continue
                k += 1
                rid = f"r{k:04d}"
                phases = []
                style: dict[str, tuple[float, float]] = {}
                team_text: dict[str, list[str]] = {"a": [], "b": []}
                for team, model in (("a", a), ("b", b)):
                    base = 260 + 40 * (truth.skill[model] - 6.0)  # better models write a little more
                    for pt in seat_phases(team):
                        n = max(40, int(rng.normal(base if team == "b" else base / 2, 90)))
                        e = int(rng.poisson(n / 100 * rng.uniform(0.5, 4.0)))
                        t = _text(rng, n, e)
                        team_text[team].append(t)
                        phases.append(Phase(phase_type=pt, model_id=model, response=t, status=PhaseStatus.COMPLETE))
                    style[team] = _style("\n\n".join(team_text[team]))
                order_idx = {pt: i for i, pt in enumerate(PhaseType)}
                phases.sort(key=lambda p: order_idx[p.phase_type])
                stance = {"a": int(rng.integers(1, 4)), "b": int(rng.integers(1, 4))}
                r = Round(id=rid, dilemma_id=d, team_a_model=a, team_b_model=b, judge_model=judges[0],
                          phases=phases, status=RoundStatus.COMPLETE, exchange_id=rid, tournament_id="t-bias")
                texts.append((r, style, stance))
                for j in judges:
                    agreement[(j, rid)] = {t: stance[t] == views[(j, d)] for t in ("a", "b")}
    w_mean = float(np.mean([s[t][0] for _, s, _ in texts for t in ("a", "b")]))
    f_mean = float(np.mean([s[t][1] for _, s, _ in texts for t in ("a", "b")]))
    n = 0
    seen: dict[str, int] = {}
    for idx, (r, style, _stance) in enumerate(texts):
        judgments: list[Judgment] = []
        for j in ([judges[idx % len(judges)]] if rotate else judges):
            if rotate:  # one judge per exchange, each judge's exchanges alternating orders (judge_order = balanced)
                n = seen.get(j, 0)
                seen[j] = n + 1
            for rep in range(repeats):
                orders = ("ab", "ba") if both_orders else (("ab",) if (n + rep) % 2 == 0 else ("ba",))
                for o in orders:
                    scores: dict[str, dict[str, int]] = {}
                    for team, model in (("a", r.team_a_model), ("b", r.team_b_model)):
                        first = 0.5 if (team == "a") == (o == "ab") else -0.5
                        agrees = agreement[(j, r.id)][team]
                        own_w, other_w = style[team][0], style["b" if team == "a" else "a"][0]
                        mean = (truth.skill[model] + truth.seat_gap * (0.5 if team == "a" else -0.5)
                                + truth.severity[j] + d_eff[r.dilemma_id]
                                + truth.words_beta * (style[team][0] - w_mean)
                                + truth.format_beta * (style[team][1] - f_mean)
                                + truth.relative_words_beta * (own_w - other_w) / (own_w + other_w)
                                + truth.preference(j, model)
                                + truth.order[j] * first + truth.agree[j] * float(bool(agrees)))
                        scores[team] = {c: int(np.clip(round(mean + crit[c] - cm + rng.normal(0, truth.noise_sd)),
                                                       1, 10)) for c in CRITERIA}
                    judgments.append(Judgment(team_a_scores=Scores(**scores["a"]), team_b_scores=Scores(**scores["b"]),
                                              judge_model=j, order=o, key=f"{j}-{o}-{rep}",
                                              origin="rejudge", repeat=rep + 1))
            n += 1
        first, *rest = judgments
        first.key, first.origin = "", "round"
        r.judgment = first
        r.judge_model = first.judge_model
        r.extra_judgments = rest
        rounds.append(r)
    return rounds, agreement


def panel_truth(*, judge_model_sd: float = 0.25, self_pref: float = 0.0, family_pref: float = 0.0,
                judges_are_models: bool = False, words_beta: float = 0.0, relative_words_beta: float = 0.0,
                skill_sd: float = 0.4, seed: int = 0) -> BiasTruth:
    """The issue-35 design: 5 models, 4 judges, each (judge, model) pair with its own liking (sd
    `judge_model_sd`). Judges apart from the models: j-one shares its family with m-alpha and m-beta (the two
    same-family pairs), the others are families of their own. `judges_are_models`: the judges are four of the
    models (a tournament whose players judge, own rounds included), each its own family. Skills drawn with sd
    `skill_sd` around 6 (seeded)."""
    rng = np.random.default_rng([seed, 36])
    models = ["m-alpha", "m-beta", "m-gamma", "m-delta", "m-eps"]
    judges = models[:4] if judges_are_models else ["j-one", "j-two", "j-three", "j-four"]
    sev = rng.normal(0, 0.3, len(judges))
    families = {m: m for m in models} | {j: j for j in judges}
    if not judges_are_models:
        families |= {"j-one": "fam-one", "m-alpha": "fam-one", "m-beta": "fam-one"}
    return BiasTruth(skill={m: float(6.0 + v) for m, v in zip(models, rng.normal(0, skill_sd, len(models)),
                                                              strict=True)},
                     severity={j: float(v - sev.mean()) for j, v in zip(judges, sev, strict=True)},
                     order=dict.fromkeys(judges, 0.0), agree=dict.fromkeys(judges, 0.0),
                     words_beta=words_beta, format_beta=0.0, relative_words_beta=relative_words_beta,
                     self_pref=self_pref, family_pref=family_pref, judge_model_sd=judge_model_sd,
                     families=families)


def mixed_truth(**kw: object) -> BiasTruth:
    """panel_truth's models with three judges that are models (self pairs: a judge scoring its own team) and
    one outside judge, j-out, sharing a family with two models (the same-family pairs)."""
    truth = panel_truth(**kw)  # type: ignore[arg-type]
    models = list(truth.skill)
    judges = [models[0], models[1], models[2], "j-out"]
    truth.severity = dict(zip(judges, [-0.3, 0.1, 0.4, -0.2], strict=True))
    truth.order = dict.fromkeys(judges, 0.0)
    truth.agree = dict.fromkeys(judges, 0.0)
    truth.families = {m: m for m in models} | {"j-out": "fam-out", models[3]: "fam-out", models[4]: "fam-out"}
    return truth
