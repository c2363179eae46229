"""The store's round and tournament files: save (keeping overrides another writer put in the file), load
(with a small cache of file text), overrides, tournaments."""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError

from ebtui.core.facts import parse_criterion, parse_team
from ebtui.core.liveness import interrupted
from ebtui.core.records import Override, Round, Team, Tournament
from ebtui.core.store.entries import OverrideKey, manual_judgment, mark_interrupted, override_key
from ebtui.core.store.files import (
    Stamp,
    StoreError,
    StoreWriteError,
    TextCache,
    atomic_write,
    check_id,
    stamp_of,
    stat_stamp,
    unreadable_reason,
    write_ctx,
    write_error,
)
from ebtui.errors import read_text

log = logging.getLogger("ebtui.core.store")


class RoundFiles:
    """The round- and tournament-file part of ResultsStore: their paths, atomic writes and reads (through
    the text cache), and the overrides other writers put in the round files this instance saves. It takes
    no lock: ResultsStore calls it under its own."""

    def __init__(
        self, root: Path, cache: TextCache, *, durable: bool, note_problem: Callable[[str, str], None]
    ) -> None:
        self.root = root
        self.rounds_dir = root / "rounds"
        self.tournaments_dir = root / "tournaments"
        self.durable = durable
        #: the first write this instance could not make (a full disk...): see StoreWriteError
        self.write_failure: StoreWriteError | None = None
        self._cache = cache
        self._note_problem = note_problem
        self._written: dict[str, Stamp] = {}  # round file stamps as we last wrote them
        #: overrides other writers put in round files this instance saves, kept on every later save
        self._foreign: dict[str, dict[OverrideKey, Override]] = {}
        #: guards _foreign, which the writer thread and the callers of save_round both read
        self._foreign_lock = threading.Lock()

    def round_path(self, round_id: str) -> Path:
        return self.rounds_dir / f"{check_id('round', round_id)}.json"

    def tournament_path(self, tournament_id: str) -> Path:
        return self.tournaments_dir / f"{check_id('tournament', tournament_id)}.json"

    def write_failed(self, exc: OSError, directory: Path, what: str) -> StoreWriteError:
        """The one-line error for a failed write; the first one is kept in `write_failure` (the round
        engine and tournaments start no model call once it is set)."""
        err = write_error(exc, directory, what)
        if self.write_failure is None:
            self.write_failure = err
        return err

    def write(self, path: Path, data: bytes) -> None:
        """The atomic write of a round file (given up when the writer thread's check says so)."""
        atomic_write(path, data, durable=self.durable, abandon=getattr(write_ctx, "abandon", None))

    def written(self, rid: str, path: Path) -> Stamp:
        """The stamp of the round file just written, remembered as ours."""
        stamp = stamp_of(os.stat(path))
        self._written[rid] = stamp
        return stamp

    def keep_foreign_overrides(self, round_: Round, path: Path) -> None:
        """Carry over overrides another writer put in the file, now and on every later save of the round
        (the round engine may replace its whole judgment after a human has already scored by hand)."""
        rid = round_.id
        current = stat_stamp(path)
        if current is not None and current != self._written.get(rid):
            disk = self._disk_overrides(path)
            if disk:
                with self._foreign_lock:
                    known = self._foreign.setdefault(rid, {})
                    for ov in disk:
                        known.setdefault(override_key(ov), ov)
        self.merge_known_overrides(round_, create=True)

    def remember_overrides(self, round_id: str, added: list[Override]) -> None:
        """Overrides this instance just wrote: a round engine using the same store still holds the round
        without them, and gets them on its next save."""
        with self._foreign_lock:
            known = self._foreign.setdefault(round_id, {})
            for override in added:
                known[override_key(override)] = override

    def merge_known_overrides(self, round_: Round, *, create: bool = False) -> None:
        """Add to `round_` the overrides other writers made that this store knows of (no file read).

        Called on the thread that owns `round_`: the background saver calls it on the engine's thread
        before it copies the round, so the engine's live judgment has them and nothing is changed across
        threads. `create`: give a round without a judgment an empty one to hold them."""
        with self._foreign_lock:
            foreign = dict(self._foreign.get(round_.id) or {})
        if not foreign or (round_.judgment is None and not create):
            return
        if round_.judgment is None:
            round_.judgment = manual_judgment(round_)
        have = {override_key(o) for o in round_.judgment.overrides}
        extra = [o for k, o in foreign.items() if k not in have]
        if extra:
            round_.judgment.overrides = sorted([*round_.judgment.overrides, *extra], key=lambda o: o.time)

    @staticmethod
    def _disk_overrides(path: Path) -> list[Override]:
        try:
            judgment = json.loads(path.read_bytes()).get("judgment")
            if not isinstance(judgment, dict):
                return []
            return [Override.model_validate(o) for o in judgment.get("overrides") or []]
        except (OSError, ValueError, AttributeError, TypeError):
            return []  # an unreadable file is simply replaced by the new whole round

    def load_round(self, round_id: str) -> Round:
        path = self.round_path(round_id)
        try:
            st = os.stat(path)
        except FileNotFoundError:
            raise StoreError(f"round {round_id!r} not found: {path} does not exist") from None
        except OSError as exc:
            raise StoreError(f"{path}: cannot read: {exc.strerror}") from None
        stamp = stamp_of(st)
        text = self._cache.get(round_id, stamp)
        if text is None:
            try:
                text = path.read_bytes()
            except OSError as exc:
                raise StoreError(f"{path}: {unreadable_reason(exc)}") from None
        try:
            round_ = Round.model_validate_json(text)
        except ValidationError as exc:
            errors = exc.errors()
            first = errors[0] if errors else None
            where = (".".join(str(p) for p in first["loc"]) if first else "") or "file"
            raise StoreError(f"{path}: not a readable round ({where}: {first['msg'] if first else exc})") from None
        self._cache.put(round_id, stamp, text)
        if interrupted(round_.status, round_.settings.writer):
            mark_interrupted(round_)
        return round_

    def write_tournament(self, path: Path, tournament: Tournament) -> None:
        """The atomic write of a tournament's file at `path` (its tournament_path; caller holds the flock)."""
        self.tournaments_dir.mkdir(parents=True, exist_ok=True)
        atomic_write(path, tournament.model_dump_json(indent=2).encode("utf-8"), durable=self.durable)

    def load_tournament(self, tournament_id: str) -> Tournament:
        path = self.tournament_path(tournament_id)
        text = read_text(path, StoreError, missing=f"tournament {tournament_id!r} not found: {path} does not exist")
        try:
            return Tournament.model_validate_json(text)
        except ValidationError as exc:
            errors = exc.errors()
            first = errors[0] if errors else None
            raise StoreError(f"{path}: not a readable tournament ({first['msg'] if first else exc})") from None

    def list_tournaments(self) -> list[Tournament]:
        """Every readable tournament, oldest first; unreadable files are logged and skipped."""
        out: list[Tournament] = []
        if not self.tournaments_dir.is_dir():
            return out
        for path in sorted(self.tournaments_dir.glob("*.json")):
            if path.name.startswith("."):
                continue
            try:
                out.append(self.load_tournament(path.stem))
            except StoreError as exc:
                log.warning("%s", exc)
                self._note_problem(str(path), str(exc))
        out.sort(key=lambda t: t.created)
        return out


def score_override(
    round_id: str, team: Team | str, criterion: str, value: int | None, note: str, author: str
) -> Callable[[Round], list[Override]]:
    """What ResultsStore.apply_override adds: a human's score for one criterion of one team (value None
    clears it), built from the round as it is on disk. The team, criterion and value are checked here."""
    t = parse_team(team)
    crit = parse_criterion(criterion)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 10):
        raise ValueError(f"score must be a whole number from 1 to 10, not {value!r}")

    def build(round_: Round) -> list[Override]:
        judgment = round_.judgment
        if value is None and (judgment is None or (t, crit) not in judgment.active_overrides()):
            raise ValueError(f"round {round_id}: team {t.upper()} {crit} has no override to clear")
        if judgment is None:
            judgment = round_.judgment = manual_judgment(round_)
        parsed = getattr(judgment.parsed_scores(t), crit)
        return [Override(team=t, criterion=crit, parsed_value=parsed, value=value, note=note, author=author)]

    return build
