"""An OpenAI-compatible chat server (streamed answers, like the real API) whose teams and judges follow a planted
truth: teams write answers of varying length ending in a conclusion ("course N"); judges score from their skill
plus a length bias, a per-judge reading-order bias and a per-judge bonus for teams that conclude as the judge
itself would, and answer ebtui's own-view and team-conclusion prompts (ebtui.core.judge_views) consistently.
Everything it decides is read from the prompts ebtui sends, as a real model would. Used by
tests/cli/test_judge_bias_e2e.py."""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

from ebtui.core.records import CRITERIA

COURSES = 3


def _h(*parts: Any) -> int:
    return int(hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()[:12], 16)


@dataclass
class Planted:
    skill: dict[str, float]
    order: dict[str, float]  # judge -> points to the team read first minus the team read second
    agree: dict[str, float]  # judge -> points to a team whose course is the judge's own
    length: float = 0.3  # points per 100 words of the team's own text (as the judge reads it)
    mean_words: float = 450.0  # the length bias is centred here (words of a team's own text)
    noise: float = 0.8
    calls: Counter[str] = field(default_factory=Counter)
    #: points per unit of (words - other team's words) / (words + other team's words): the longer answer wins
    relative_length: float = 0.0
    #: points a judge adds to its own model's team (a model judging a round it plays, `rejudge --allow-own`)
    self_pref: float = 0.0
    #: points a judge adds to a model of its family (`families`: name -> family; a name not in it: its own)
    family_pref: float = 0.0
    families: dict[str, str] = field(default_factory=dict)

    def preference(self, judge: str, model: str) -> float:
        if judge == model:
            return self.self_pref
        same = self.families.get(judge, judge) == self.families.get(model, model)
        return self.family_pref if same else 0.0

    def own_course(self, judge: str, dilemma: str) -> int:
        return _h("view", judge, dilemma) % COURSES + 1


def _sections(prompt: str) -> dict[str, str]:
    """'## heading' -> the fenced text under it."""
    out = {}
    for m in re.finditer(r"^## ([^\n]+)\n\n(`{3,})text\n(.*?)\n\2$", prompt, re.MULTILINE | re.DOTALL):
        out[m.group(1)] = m.group(3)
    return out


def _course(text: str) -> int | None:
    found = re.findall(r"course (\d)", text)
    return int(found[-1]) if found else None


def _dilemma(prompt: str) -> str:
    m = re.search(r"^# Dilemma: (.+)$", prompt, re.MULTILINE)
    return m.group(1).strip() if m else ""


class Brain:
    def __init__(self, planted: Planted) -> None:
        self.p = planted

    def answer(self, model: str, prompt: str) -> str:
        p = self.p
        p.calls[model] += 1
        judging = any(task in prompt for task in ("# Your task: the judgment", "# Your task: your own answer",
                                                  "# Your task: which course each team"))
        if model in p.skill and not judging:  # a player's turn (a player may also judge)
            return self.team(model, prompt)
        if "# Your task: your own answer" in prompt:
            return json.dumps({"options": [f"course {k}" for k in range(1, COURSES + 1)],
                               "choice": p.own_course(model, _dilemma(prompt)), "confidence": 0.7,
                               "reason": "it weighs the stakes best"})
        if "# Your task: which course each team concluded for" in prompt:
            s = _sections(prompt)
            return json.dumps({"team_a": _course(s.get("Team A's conclusion", "")) or 0,
                               "team_b": _course(s.get("Team B's conclusion", "")) or 0})
        if "# Your task: the judgment" in prompt:
            return self.judge(model, prompt)
        return "I cannot tell what is asked."

    def team(self, model: str, prompt: str) -> str:
        rng = np.random.default_rng(_h(model, prompt[-400:], len(prompt)))
        words = int(max(30, rng.normal(120 + 25 * (self.p.skill[model] - 6), 60)))
        course = int(rng.integers(1, COURSES + 1))
        body = " ".join(f"w{int(rng.integers(0, 999))}" for _ in range(words))
        return f"{body}\n\nPrinciple: care for those affected.\nConclusion: I recommend course {course}."

    def judge(self, judge: str, prompt: str) -> str:
        p = self.p
        s = _sections(prompt)
        pres, resp = s.get("Team A's presentation", ""), s.get("Team B's response", "")
        texts = {"a": "\n\n".join([pres, s.get("Team A's rebuttal", ""), s.get("Team A's consistency test", "")]),
                 "b": resp}
        first = "b" if prompt.index("## Team B's response") < prompt.index("## Team A's presentation") else "a"
        models = dict(zip("ab", re.findall(r"Team [AB] \(model `([^`]+)`\)", prompt), strict=False))
        own = p.own_course(judge, _dilemma(prompt))
        courses = {"a": _course(pres + "\n" + s.get("Team A's rebuttal", "")), "b": _course(resp)}
        rng = np.random.default_rng(_h(judge, prompt))
        out: dict[str, Any] = {}
        words = {t: len(texts[t].split()) for t in "ab"}
        for team in "ab":
            other = "b" if team == "a" else "a"
            mean = (p.skill[models[team]] + p.length * (words[team] - p.mean_words) / 100.0
                    + p.relative_length * (words[team] - words[other]) / max(words[team] + words[other], 1)
                    + p.preference(judge, models[team])
                    + p.order.get(judge, 0.0) * (0.5 if team == first else -0.5)
                    + p.agree.get(judge, 0.0) * float(courses[team] == own))
            out[f"team_{team}"] = {"scores": {c: int(np.clip(round(mean + rng.normal(0, p.noise)), 1, 10))
                                              for c in CRITERIA}, "justification": "reasons"}
        out["overall_analysis"] = "a fair exchange"
        return json.dumps(out)


def _sse(model: str, text: str) -> bytes:
    base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": model}
    events = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": text},
                                    "finish_reason": None}]},
              {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
              {**base, "choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150}}]
    return b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in events) + b"data: [DONE]\n\n"


class FakeServer:
    """Start with `with FakeServer(planted) as url:`; `url` is the base_url for models.toml."""

    def __init__(self, planted: Planted) -> None:
        brain = Brain(planted)
        lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - the http.server name
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
                model = body.get("model", "")
                content = body["messages"][-1]["content"]
                prompt = content if isinstance(content, str) else "".join(
                    part.get("text", "") for part in content if isinstance(part, dict))
                with lock:
                    text = brain.answer(model, prompt)
                data = _sse(model, text)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
