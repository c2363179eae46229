"""The judge's own view of a dilemma, and whether each team's conclusion agrees with it: two cached calls
per judge (its blind view of the dilemma as options and a choice, once per dilemma; which option each
team's conclusion recommends, once per exchange), kept in `<store>/judge_views/` and written atomically
after every answer, so a rerun asks only what is missing.
Design: docs/STATISTICS.md, "Agreement with the judge's own view".
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TypedDict, cast

from pydantic import JsonValue

from ebtui.core import prompts
from ebtui.core.facts import exchange_key
from ebtui.core.records import Dilemma, PhaseStatus, PhaseType, Round, utcnow
from ebtui.core.store import atomic_write
from ebtui.providers.base import PROMPT_CACHE_BREAK, ModelClient, ProviderError

VIEW_PROMPT_VERSION = "view-2026.11"
DIRNAME = "judge_views"

VIEW_SCHEMA: dict[str, JsonValue] = {
    "type": "object",
    "properties": {
        "options": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 4},
        "choice": {"type": "integer", "minimum": 1, "maximum": 4},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "reason": {"type": "string"},
    },
    "required": ["options", "choice", "confidence", "reason"],
    "additionalProperties": False,
}

CONCLUSIONS_SCHEMA: dict[str, JsonValue] = {
    "type": "object",
    "properties": {"team_a": {"type": "integer", "minimum": 0, "maximum": 4},
                   "team_b": {"type": "integer", "minimum": 0, "maximum": 4}},
    "required": ["team_a", "team_b"],
    "additionalProperties": False,
}


def view_prompt(dilemma: Dilemma) -> str:
    task = """\
# Your task: your own answer, before any team speaks

Answer this dilemma yourself, briefly. First name the 2 to 4 distinct, mutually exclusive courses of action \
the dilemma leaves open (one short sentence each). Then say which one you recommend, how confident you are \
(from 0 to 1), and why, in one sentence.

Reply with JSON only, in this form:
{"options": ["<course 1>", "<course 2>", ...], "choice": <number of your course, from 1>, \
"confidence": <0 to 1>, "reason": "<one sentence>"}"""
    return prompts.dilemma_block(dilemma) + PROMPT_CACHE_BREAK + task + "\n"


def _quoted(heading: str, text: str) -> str:
    """Model text, fenced so nothing inside can close the fence (as ebtui.core.prompts does)."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"## {heading}\n\n{ticks}text\n{text.strip(chr(10))}\n{ticks}"


def _numbered(options: Sequence[str]) -> str:
    return "\n".join(f"{i}. {o}" for i, o in enumerate(options, start=1))


def team_conclusions(r: Round) -> tuple[str, str]:
    """Each team's conclusion as the conclusions prompt quotes it (see the module docstring)."""

    def text(pt: PhaseType) -> str:
        ph = r.phase(pt)
        return ph.response if ph is not None and ph.status == PhaseStatus.COMPLETE else ""

    pres = text(PhaseType.PRESENTATION)
    _principle, conclusion = prompts.extract_principle_conclusion(pres)
    a = (f"Stated conclusion: {conclusion}" if conclusion else pres) + "\n\nRebuttal (its final position):\n" \
        + text(PhaseType.REBUTTAL)
    return a, text(PhaseType.RESPONSE)


def conclusions_prompt(dilemma: Dilemma, options: Sequence[str], team_a: str, team_b: str) -> str:
    task = f"""\
# Your task: which course each team concluded for

These are the courses of action you named for this dilemma:
{_numbered(options)}

Above are the two teams' conclusions. For each team, give the number of the course its final conclusion \
recommends, or 0 when it recommends none of them or it is unclear. Judge only what the team concluded, not \
how well it argued.

Reply with JSON only: {{"team_a": <number>, "team_b": <number>}}"""
    sections = [_quoted("Team A's conclusion", team_a), _quoted("Team B's conclusion", team_b)]
    return prompts.dilemma_block(dilemma) + PROMPT_CACHE_BREAK + "\n\n".join([*sections, task]) + "\n"


class OwnView(TypedDict):
    """A judge's own view of a dilemma as read from its reply."""

    options: list[str]  # the courses of action it sees, in its own terms
    choice: int  # the one it recommends (1-based)
    confidence: float | None
    reason: str


class SavedView(OwnView):
    """An own view as the cache keeps it."""

    raw: str
    asked_at: str
    prompt_version: str


class SavedConclusions(TypedDict):
    """Which option each team's conclusion recommends (None: none or unreadable), as the cache keeps it."""

    a: int | None
    b: int | None
    raw: str
    asked_at: str


class ViewEntry(TypedDict):
    """One cache file: a judge's view of a dilemma and its reading of each exchange's conclusions."""

    judge: str
    dilemma_id: str
    view: SavedView | None
    teams: dict[str, SavedConclusions]  # exchange id -> conclusions


def read_json_object(text: str) -> dict[str, JsonValue] | None:
    """The first JSON object in a reply (fenced or bare), or None."""
    for m in re.finditer(r"\{", text):
        depth = 0
        for k in range(m.start(), len(text)):
            if text[k] == "{":
                depth += 1
            elif text[k] == "}":
                depth -= 1
                if depth == 0:
                    try:
                        obj = json.loads(text[m.start():k + 1])
                    except ValueError:
                        break
                    return obj if isinstance(obj, dict) else None
    return None


def _whole(v: object) -> int | None:
    """A whole number given as a JSON number or a numeric string ("2", 2.0); anything else None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, str) and re.fullmatch(r"\s*\d+\s*", v):
        return int(v)
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v if isinstance(v, int) else None


def parse_view(text: str) -> OwnView | None:
    obj = read_json_object(text)
    if obj is None:
        return None
    options = obj.get("options")
    choice = _whole(obj.get("choice"))
    conf = obj.get("confidence")
    if isinstance(conf, str):
        try:
            conf = float(conf)
        except ValueError:
            conf = None
    if not isinstance(options, list):
        return None
    names = [o for o in options if isinstance(o, str)]
    if len(names) != len(options) or not 2 <= len(names) <= 4 or choice is None or not 1 <= choice <= len(names):
        return None
    if isinstance(conf, bool) or not isinstance(conf, int | float) or not 0 <= conf <= 1:
        conf = None
    return {"options": names, "choice": choice, "confidence": conf, "reason": str(obj.get("reason") or "")}


def parse_conclusions(text: str, n_options: int) -> dict[str, int | None] | None:
    obj = read_json_object(text)
    if obj is None:
        return None
    out: dict[str, int | None] = {}
    for team in ("a", "b"):
        v = _whole(obj.get(f"team_{team}"))
        out[team] = v if v is not None and 1 <= v <= n_options else None
    return out


# ---- the cache -------------------------------------------------------------------------------------------


def cache_path(root: str | Path, judge: str, dilemma_id: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{judge}__{dilemma_id}")[:120]
    digest = hashlib.sha256(f"{judge}\x1f{dilemma_id}".encode()).hexdigest()[:8]
    return Path(root) / DIRNAME / f"{safe}-{digest}.json"


def load_entry(root: str | Path, judge: str, dilemma_id: str) -> ViewEntry:
    path = cache_path(root, judge, dilemma_id)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"judge": judge, "dilemma_id": dilemma_id, "view": None, "teams": {}}
    if not isinstance(data, dict):
        return {"judge": judge, "dilemma_id": dilemma_id, "view": None, "teams": {}}
    data.setdefault("teams", {})
    return cast(ViewEntry, data)  # the file as save_entry wrote it


def save_entry(root: str | Path, entry: ViewEntry) -> None:
    path = cache_path(root, entry["judge"], entry["dilemma_id"])
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(entry, indent=2, ensure_ascii=False, default=str).encode("utf-8"))


def agreement_map(root: str | Path) -> dict[tuple[str, str], dict[str, bool | None]]:
    """(judge, exchange id) -> {"a": agrees?, "b": agrees?} from every cached view (None: unknown)."""
    out: dict[tuple[str, str], dict[str, bool | None]] = {}
    folder = Path(root) / DIRNAME
    if not folder.is_dir():
        return out
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        view = data.get("view") if isinstance(data, dict) else None
        if not isinstance(view, dict) or not isinstance(view.get("choice"), int):
            continue
        for ex, t in (data.get("teams") or {}).items():
            if isinstance(t, dict):
                out[(str(data.get("judge")), str(ex))] = {
                    team: (None if not isinstance(t.get(team), int) else t[team] == view["choice"])
                    for team in ("a", "b")}
    return out


# ---- asking ---------------------------------------------------------------------------------------------


def needed(rounds: Iterable[Round], judges: Sequence[str] | None = None) -> dict[tuple[str, str], list[Round]]:
    """(judge, dilemma id) -> one round per exchange that judge judged (or, with `judges`, every exchange)."""
    out: dict[tuple[str, str], dict[str, Round]] = {}
    for r in rounds:
        names = list(judges) if judges else sorted({j.judge_model or r.judge_model for j in r.all_judgments()})
        for judge in names:
            out.setdefault((judge, r.dilemma_id), {}).setdefault(exchange_key(r), r)
    return {k: list(v.values()) for k, v in out.items()}


def plan_views(root: str | Path, rounds: Sequence[Round], judges: Sequence[str] | None = None) -> dict[str, int]:
    """How many calls are still to make: own views and team-conclusion classifications."""
    views = teams = 0
    for (judge, d), rs in needed(rounds, judges).items():
        entry = load_entry(root, judge, d)
        views += entry.get("view") is None
        teams += sum(1 for r in rs if exchange_key(r) not in entry["teams"])
    return {"views": views, "conclusions": teams}


async def gather_views(
    root: str | Path,
    rounds: Sequence[Round],
    clients: Mapping[str, ModelClient],
    dilemma_of: Callable[[Round], Dilemma | None],
    *,
    judges: Sequence[str] | None = None,
    concurrency: int = 8,
    on_done: Callable[[str], None] | None = None,
) -> dict[str, int]:
    """Ask what the cache lacks; every answer is saved as it arrives. Returns counts of calls made/failed."""
    sem = asyncio.Semaphore(max(1, concurrency))
    counts = {"views": 0, "conclusions": 0, "failed": 0, "unreadable": 0}
    say = on_done or (lambda _m: None)

    async def ask(client: ModelClient, prompt: str, schema: dict[str, JsonValue]) -> str | None:
        async with sem:
            try:
                reply = await client.generate(prompt, prompts.SYSTEM_PROMPT,
                                              json_schema=schema if client.supports_json_schema else None)
            except ProviderError as exc:
                counts["failed"] += 1
                say(f"failed: {exc}")
                return None
        return reply.text

    async def one(judge: str, d_id: str, rs: list[Round]) -> None:
        entry = load_entry(root, judge, d_id)
        dilemma = next((d for r in rs if (d := dilemma_of(r)) is not None), None)
        if dilemma is None:
            say(f"{judge} / {d_id}: no dilemma text, skipped")
            return
        client = clients[judge]
        saved = entry.get("view")
        if saved is None:
            text = await ask(client, view_prompt(dilemma), VIEW_SCHEMA)
            if text is None:
                return
            counts["views"] += 1
            view = parse_view(text)
            if view is None:
                counts["unreadable"] += 1
                say(f"{judge} / {d_id}: own view unreadable")
                return
            saved = entry["view"] = {**view, "raw": text, "asked_at": utcnow().isoformat(),
                                     "prompt_version": VIEW_PROMPT_VERSION}
            save_entry(root, entry)
            say(f"{judge} / {d_id}: own view saved (course {view['choice']} of {len(view['options'])})")
        options = saved["options"]

        async def classify(r: Round) -> None:
            ex = exchange_key(r)
            a, b = team_conclusions(r)
            text = await ask(client, conclusions_prompt(dilemma, options, a, b), CONCLUSIONS_SCHEMA)
            if text is None:
                return
            counts["conclusions"] += 1
            got = parse_conclusions(text, len(options))
            if got is None:
                counts["unreadable"] += 1
            said = got or {"a": None, "b": None}
            entry["teams"][ex] = {"a": said["a"], "b": said["b"], "raw": text, "asked_at": utcnow().isoformat()}
            save_entry(root, entry)  # on the event loop, between awaits: one writer of this file at a time

        await asyncio.gather(*(classify(r) for r in rs if exchange_key(r) not in entry["teams"]))

    missing = sorted({j for (j, _d) in needed(rounds, judges)} - set(clients))
    if missing:
        raise ValueError(f"no client for judge(s): {', '.join(missing)}")
    await asyncio.gather(*(one(j, d, rs) for (j, d), rs in sorted(needed(rounds, judges).items(),
                                                                    key=lambda kv: kv[0])))
    return counts
