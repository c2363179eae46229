"""The batch ledger: every submitted batch and its items, in one small JSON file per tournament,
`<store>/batches/<tournament_id>.json`, rewritten atomically after every change. A batch id is written
before it is polled and an intent before each submission, so a resumed run never submits a wave twice.
Item keys and states: docs/BATCH.md, "The ledger".
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import JsonValue

LEDGER_VERSION = 1


@dataclass
class ItemRecord:
    key: str  # the request hash
    model: str
    batch: str | None = None  # batch id (None: in an intent not yet confirmed)
    state: str = "pending"  # pending | done | consumed | failed
    phase: str = ""  # which phase of a round the prompt is (for people reading the ledger and the TUI)
    error: str | None = None
    error_kind: str | None = None


@dataclass
class BatchRecord:
    id: str
    model: str
    provider: str
    label: str
    wave: int
    submitted_at: float  # unix time
    items: list[str] = field(default_factory=list)
    status: str = "submitted"  # submitted | in_progress | done | failed | expired | cancelled
    ended_at: float | None = None
    total: int = 0
    completed: int = 0
    failed: int = 0
    phases: dict[str, int] = field(default_factory=dict)  # phase -> items of it in this batch
    results_read: bool = False  # the results were read and handed out (or kept as done items)
    retried: int = 0  # items of this batch that failed and were submitted again in a later batch


@dataclass
class Intent:
    label: str
    model: str
    items: list[str]
    at: float


def ledger_path(store_root: str | Path, tournament_id: str) -> Path:
    return Path(store_root) / "batches" / f"{tournament_id}.json"


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class LedgerError(Exception):
    """The ledger file exists but cannot be read."""


class BatchLedger:
    """The batches of one tournament. `save()` after changes; `load()` (or `BatchLedger.open`) to resume."""

    def __init__(self, path: Path, tournament_id: str) -> None:
        self.path = path
        self.tournament_id = tournament_id
        self.batches: dict[str, BatchRecord] = {}
        self.items: dict[str, ItemRecord] = {}
        self.intents: list[Intent] = []
        self.waves: dict[str, int] = {}  # model -> batches submitted so far
        self._by_key: dict[str, list[str]] = {}  # request hash -> custom ids (an index over items)

    @classmethod
    def open(cls, store_root: str | Path, tournament_id: str) -> BatchLedger:
        ledger = cls(ledger_path(store_root, tournament_id), tournament_id)
        ledger.load()
        return ledger

    def load(self) -> None:
        if not self.path.exists():
            return
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            self.batches = {b["id"]: BatchRecord(**b) for b in data.get("batches", [])}
            self.items = {cid: ItemRecord(**it) for cid, it in data.get("items", {}).items()}
            self.intents = [Intent(**i) for i in data.get("intents", [])]
            self.waves = {str(k): int(v) for k, v in data.get("waves", {}).items()}
            self._by_key = {}
            for cid, it in self.items.items():
                self._by_key.setdefault(it.key, []).append(cid)
        except (OSError, ValueError, TypeError, KeyError) as exc:
            raise LedgerError(f"{self.path}: unreadable batch ledger: {exc}") from None

    def to_json(self) -> dict[str, object]:
        return {
            "version": LEDGER_VERSION,
            "tournament_id": self.tournament_id,
            "updated": time.time(),
            "waves": self.waves,
            "batches": [asdict(b) for b in sorted(self.batches.values(), key=lambda b: b.submitted_at)],
            "intents": [asdict(i) for i in self.intents],
            "items": {cid: asdict(it) for cid, it in self.items.items()},
        }

    def save(self) -> None:
        _atomic_write(self.path, json.dumps(self.to_json(), indent=1, ensure_ascii=False).encode("utf-8"))

    # -- queries -----------------------------------------------------------------------------------------
    def add_item(self, cid: str, item: ItemRecord) -> None:
        self.items[cid] = item
        self._by_key.setdefault(item.key, []).append(cid)

    def drop_item(self, cid: str) -> None:
        item = self.items.pop(cid, None)
        if item is not None and cid in self._by_key.get(item.key, []):
            self._by_key[item.key].remove(cid)

    def occurrences(self, key: str) -> int:
        """How many items were ever made for this request hash (the next item's n)."""
        return max((int(cid.rsplit("-", 1)[1]) + 1 for cid in self._by_key.get(key, [])), default=0)

    def reusable(self, key: str, exclude: set[str]) -> str | None:
        """An item with this request hash whose answer is pending or waiting to be handed out, if any."""
        for cid in self._by_key.get(key, []):
            it = self.items[cid]
            if cid not in exclude and it.state in ("pending", "done") and it.batch:
                return cid
        return None

    def batches_json(self) -> dict[str, list[dict[str, object]]]:
        """The batches without their items (what front ends show)."""
        return {"batches": [{k: v for k, v in asdict(b).items() if k != "items"} | {"total": b.total or len(b.items)}
                            for b in sorted(self.batches.values(), key=lambda b: b.submitted_at)]}

    def open_batches(self) -> list[BatchRecord]:
        return [b for b in self.batches.values() if not b.results_read]

    def next_wave(self, model: str) -> int:
        self.waves[model] = self.waves.get(model, 0) + 1
        return self.waves[model]


def read_ledger(store_root: str | Path, tournament_id: str) -> dict[str, JsonValue] | None:
    """The ledger as plain data (for front ends showing batch states), or None when there is none."""
    path = ledger_path(store_root, tournament_id)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
