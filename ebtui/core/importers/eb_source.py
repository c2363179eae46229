"""Reading the Ethics Bowl runner's files (round .json, folders, all_rounds.jsonl) and rebuilding a dilemma
from the prompts a round holds. See ebtui.core.importers.eb."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic import JsonValue

from ebtui.core.records import Dilemma

__all__ = ["RUNNER", "ImportProblem", "SourceRecord", "content_hash", "dilemma_from_prompts", "iter_sources",
           "latest_saves", "read_sources", "source_run"]

#: the name ebtui records as a round's original runner
RUNNER = "moral_reasoning_quality_evaluation"


@dataclass
class SourceRecord:
    """One round record as read from a file."""

    data: dict[str, JsonValue]
    path: Path
    line: int | None = None  # 1-based, for .jsonl

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}" if self.line else str(self.path)


@dataclass
class ImportProblem:
    """A file (or a line of one) that could not be imported."""

    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


def read_sources(paths: Iterable[str | Path]) -> tuple[list[SourceRecord], list[ImportProblem]]:
    """Every round record in the given files and folders, and one problem per unreadable file or line.

    A folder gives its `*.json` and `*.jsonl` files (and those of a `rounds/` folder inside it, so a run's
    folder works too); a run's `manifest.json` and `checkpoints/` are not rounds and are passed over.
    All in memory: `iter_sources` gives the same records one at a time.
    """
    problems: list[ImportProblem] = []
    records = list(iter_sources(paths, problems))
    return records, problems


def iter_sources(paths: Iterable[str | Path], problems: list[ImportProblem]) -> Iterator[SourceRecord]:
    """The records `read_sources` gives, one at a time, in the same order (a .jsonl file is read line by
    line, so memory stays flat whatever its size); problems are appended to `problems` as they are met."""
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            problems.append(ImportProblem(str(path), "no such file or folder"))
            continue
        if path.is_dir():
            files = _folder_files(path)
            if not files:
                problems.append(ImportProblem(str(path), "folder holds no .json or .jsonl round files"))
            for f in files:
                yield from _read_file(f, problems, in_folder=True)
        else:
            yield from _read_file(path, problems, in_folder=False)


def _folder_files(folder: Path) -> list[Path]:
    """The folder's round files, its rounds/ folder's (a run's folder), or else those of every rounds/
    folder below it (the runner's results folder, one run per subfolder); never checkpoints/."""
    def files(d: Path) -> list[Path]:
        return sorted(p for p in d.iterdir() if p.is_file() and not p.name.startswith(".")
                      and p.suffix.lower() in (".json", ".jsonl"))

    out: list[Path] = []
    for d in (folder, folder / "rounds"):
        if d.is_dir():
            out.extend(files(d))
    if not out:
        for d in sorted(folder.rglob("rounds")):
            if d.is_dir() and "checkpoints" not in d.relative_to(folder).parts:
                out.extend(files(d))
    return out


def source_run(path: Path) -> str:
    """The runner's run (folder) name for a round file: the folder holding rounds/, else the file's folder."""
    parent = path.resolve().parent
    return parent.parent.name if parent.name == "rounds" else parent.name


def _read_file(path: Path, problems: list[ImportProblem], *, in_folder: bool) -> Iterator[SourceRecord]:
    if path.suffix.lower() == ".jsonl":
        yield from _read_lines(path, problems)
        return
    try:
        raw = path.read_bytes()
    except OSError as exc:
        problems.append(ImportProblem(str(path), f"cannot read: {exc.strerror or exc}"))
        return
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        problems.append(ImportProblem(str(path), f"not UTF-8 text (byte {exc.start}); not a round file"))
        return
    if not text.strip():
        problems.append(ImportProblem(str(path), "empty file"))
        return
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        problems.append(ImportProblem(str(path), f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"))
        return
    if isinstance(obj, dict) and "phases" not in obj and isinstance(obj.get("rounds"), list) and "tournament_id" in obj:
        if not in_folder:  # a run's manifest lists rounds but holds none of their text
            problems.append(ImportProblem(str(path), "a run manifest, not a round file (give the rounds/ folder)"))
        return
    if isinstance(obj, list):
        for i, item in enumerate(obj, 1):
            if isinstance(item, dict):
                yield SourceRecord(item, path, i)
            else:
                problems.append(ImportProblem(f"{path}[{i}]", "not a round (a JSON object was expected)"))
        return
    if not isinstance(obj, dict):
        problems.append(ImportProblem(str(path), "not a round (a JSON object was expected)"))
        return
    yield SourceRecord(obj, path)


def _read_lines(path: Path, problems: list[ImportProblem]) -> Iterator[SourceRecord]:
    """A .jsonl file one line at a time: a line that is not UTF-8, not JSON or not an object is a problem
    of its own (`file:line`); the lines around it still import."""
    any_text = False
    try:
        with path.open("rb") as fh:
            for n, raw in enumerate(fh, 1):
                if n == 1:
                    raw = raw.removeprefix(b"\xef\xbb\xbf")  # a byte-order mark
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    problems.append(ImportProblem(f"{path}:{n}", f"not UTF-8 text (byte {exc.start})"))
                    any_text = True
                    continue
                if not line.strip():
                    continue
                any_text = True
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    problems.append(ImportProblem(f"{path}:{n}", f"not valid JSON ({exc.msg} at column {exc.colno})"))
                    continue
                if not isinstance(obj, dict):
                    problems.append(ImportProblem(f"{path}:{n}", "not a round (a JSON object was expected)"))
                    continue
                yield SourceRecord(obj, path, n)
    except OSError as exc:
        problems.append(ImportProblem(str(path), f"cannot read: {exc.strerror or exc}"))
        return
    if not any_text:
        problems.append(ImportProblem(str(path), "empty file"))


def content_hash(data: dict[str, JsonValue]) -> str:
    canon = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()


def latest_saves(records: Iterable[SourceRecord]) -> tuple[list[bool], list[str]]:
    """Which records to import, by position: one per runner round id. The runner appends a round to
    all_rounds.jsonl each time it saves it, so a round saved again (resumed, re-run) can appear with older
    content. The complete save with the latest phase wins (its identical copies are kept, to be counted as
    read twice); the others are reported (where), not imported as extra rounds. Holds a hash and a rank per
    record, never the records."""
    def rank(data: dict[str, JsonValue]) -> tuple[bool, str, int]:
        raw = data.get("phases")
        phases: list[JsonValue] = raw if isinstance(raw, list) else []
        last = max((str(p.get("timestamp") or "") for p in phases if isinstance(p, dict)), default="")
        return (data.get("status") == "complete", last, len(phases))

    seen: list[tuple[str, str, str]] = []  # (runner id, content hash, where) per record, in order
    best: dict[str, tuple[str, tuple[bool, str, int]]] = {}  # runner id -> (hash, rank) of its latest save
    for rec in records:
        key, digest = str(rec.data.get("id", "")), content_hash(rec.data)
        seen.append((key, digest, rec.where))
        if not key:
            continue
        if key not in best:
            best[key] = (digest, rank(rec.data))
        elif digest != best[key][0] and (r := rank(rec.data)) >= best[key][1]:
            best[key] = (digest, r)
    keep = [not key or digest == best[key][0] for key, digest, _ in seen]
    dropped = [where for (_, _, where), k in zip(seen, keep, strict=True) if not k]
    return keep, dropped


def _section(text: str, heading: str) -> str | None:
    """The text under "## <heading>" up to the next "## " heading (None when absent)."""
    m = re.search(rf"^##\s*{heading}\s*$\n(?P<body>.*?)(?=^##\s|\Z)", text, re.M | re.S | re.I)
    return m.group("body").strip() if m else None


def dilemma_from_prompts(dilemma_id: str, prompts: dict[str, str], source: str = "") -> Dilemma:
    """The dilemma as the round's prompts showed it to the models (the runner's prompt layout)."""
    pres = prompts.get("presentation", "")
    title = ""
    for key in ("presentation", "response", "judgment"):
        m = re.search(r"^##\s*The Dilemma:\s*(?P<t>.+?)\s*$", prompts.get(key, ""), re.M)
        if m:
            title = m.group("t")
            break
    if not title:
        m = re.search(r'(?:presentation|response) (?:on|to) ["\u201c](?P<t>[^"\u201d]+)["\u201d]',
                      prompts.get("consistency_test", "") + prompts.get("consistency_test_b", ""))
        title = m.group("t") if m else dilemma_id.replace("_", " ").title()
    category = ""
    scenario = ""
    body = _section(pres, r"The Dilemma:.*?") or _section(prompts.get("judgment", ""), r"The Dilemma:.*?") or ""
    body = re.split(r"^---\s*$", body, maxsplit=1, flags=re.M)[0].strip()
    m = re.match(r"\*\*Category:\*\*\s*(?P<c>[^\n]*)\n?(?P<rest>.*)", body, re.S)
    if m:
        category, scenario = m.group("c").strip(), m.group("rest").strip()
    else:
        scenario = body
    questions = []
    qtext = _section(pres, r"Questions to Address:")
    if qtext:
        questions = [re.sub(r"^\s*(?:[-*\u2022]|\d+[.)])\s+", "", ln).strip() for ln in qtext.splitlines()]
        questions = [q for q in questions if q]
    features = []
    extra = _section(prompts.get("response", ""), r"Additional Context \(not shared with presenting team\):")
    if extra:
        for ln in extra.splitlines():
            ln = re.sub(r"^\s*[-*]\s+", "", ln).strip()
            if ln:
                features.append(re.sub(r"^\*\*(.+?)\*\*:\s*", r"\1: ", ln))
    consistency = ""
    ctext = _section(prompts.get("consistency_test", "") or prompts.get("consistency_test_b", ""),
                     r"A Structurally Similar Case:")
    if ctext:
        ctext = re.sub(r"^Consider the following case, which shares structural features with the original "
                       r"dilemma:\s*", "", ctext)
        consistency = ctext.strip()
    return Dilemma(
        id=dilemma_id,
        title=title,
        category=category,
        core_scenario=scenario,
        questions=questions,
        asymmetric_features=features,
        consistency_case=consistency,
        metadata={"imported_from": RUNNER},
        source=source,
    )
