"""The store's round and tournament files: save (keeping overrides another writer put in the file), load
(with a small cache of file text), overrides, tournaments."""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError

from ebtui.core.facts import parse_criterion, parse_team
from ebtui.core.liveness import interrupted
from ebtui.core.records import Override, Round, Team, Tournament
from ebtui.core.store.entries import (
    index_entry,
    manual_judgment,
    mark_interrupted,
    override_key,
)
from ebtui.core.store.files import (
    StoreError,
    StoreWriteError,
    WriteAbandoned,
    atomic_write,
    check_id,
    fsync_dir,
    gc_paused,
    round_bytes,
    stamp_of,
    stat_stamp,
    unreadable_reason,
    write_ctx,
    write_error,
)
from ebtui.core.store.hooks import notify_saved
from ebtui.core.store.index import MARKER_IDS, IndexMixin
from ebtui.core.store.temp_files import MARKER_PREFIX
from ebtui.errors import read_text

log = logging.getLogger("ebtui.core.store")


class RoundFilesMixin(IndexMixin):
    """The round-file half of ResultsStore."""

    @property
    def tournaments_dir(self) -> Path:
        return self.root / "tournaments"

    @staticmethod
    def _check_id(kind: str, id_: str) -> str:
        return check_id(kind, id_)

    def round_path(self, round_id: str) -> Path:
        return self.rounds_dir / f"{self._check_id('round', round_id)}.json"

    def tournament_path(self, tournament_id: str) -> Path:
        return self.tournaments_dir / f"{self._check_id('tournament', tournament_id)}.json"

    def save_round(self, round_: Round) -> Path:
        """Write the round's file atomically and update the index (in memory; written in batches).

        If another writer changed the file since this instance last wrote it (an override from the TUI
        or `ebtui rounds override`), the overrides found there are kept and added to `round_` itself.
        """
        rid = self._check_id("round", round_.id)
        with self._lock:
            self._ensure_loaded()
            try:
                with self._writing():
                    path = self.round_path(rid)
                    self._keep_foreign_overrides(round_, path)
                    data = round_bytes(round_)
                    self._write_round_file(path, data)
                    self._after_write(rid, round_, path, data)
                    if self._flush_due():
                        self._flush_index_or_note()
            except OSError as exc:  # a full disk, a quota, a read-only folder: the file is as it was
                raise self._write_failed(exc, self.rounds_dir, f"round {rid}") from None
        return path

    def _write_failed(self, exc: OSError, directory: Path, what: str) -> StoreWriteError:
        """The one-line error for a failed write; the first one is kept in `write_failure` (the round
        engine and tournaments start no model call once it is set)."""
        err = write_error(exc, directory, what)
        if self.write_failure is None:
            self.write_failure = err
        return err

    def _flush_index_or_note(self) -> None:
        """A batched index write: failing, it is only noted (the round file is saved, and the index is
        rebuilt from the round files on the next open)."""
        try:
            self._flush_locked()
        except OSError as exc:
            log.debug("%s: cannot write the index now (%s)", self.index_path, exc)

    def _write_round_file(self, path: Path, data: bytes) -> None:
        """The atomic write of a round file (caller holds the flock), with the bookkeeping that lets the
        next open trust index.json: the marker first, then whether the folder changed only by us."""
        self._mark_unindexed()
        before = self._dir_mtime()
        try:
            atomic_write(path, data, durable=self.durable, abandon=getattr(write_ctx, "abandon", None))
        except WriteAbandoned:  # a temporary file came and went: the folder still changed only by us
            self._verified = self._dir_mtime() if before == self._verified else None
            raise
        after = self._dir_mtime()
        self._verified = after if before == self._verified else None

    def _mark_unindexed(self) -> None:
        """Before the first round write index.json will lack: leave a marker, so an open (by any process)
        does the full check until this instance has written its index (or is known dead)."""
        if self._marker is not None:
            return
        path = self.root / f"{MARKER_PREFIX}{os.getpid()}-{next(MARKER_IDS)}"
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o644))
        if self.durable:
            fsync_dir(self.root)
        self._marker = path

    def _after_write(self, rid: str, round_: Round, path: Path, data: bytes) -> None:
        stamp = stamp_of(os.stat(path))
        self._written[rid] = stamp
        assert self._entries is not None
        self._entries[rid] = index_entry(
            round_, path=f"rounds/{rid}.json", stamp=stamp, saved_ns=time.time_ns()
        )
        self._dirty.add(rid)
        self._cache_put(rid, stamp, data)
        notify_saved(self, rid, data, stamp)  # e.g. the analysis columns (ebtui.core.analysis.source)

    def _keep_foreign_overrides(self, round_: Round, path: Path) -> None:
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
        with self._lock:
            hit = self._cache.get(round_id)
            if hit is not None and hit[0] == stamp:
                self._cache.move_to_end(round_id)
                text = hit[1]
            else:
                text = None
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
        with self._lock:
            self._cache_put(round_id, stamp, text)
        if interrupted(round_.status, round_.settings.writer):
            mark_interrupted(round_)
        return round_


    def load_rounds(self, **filters: object) -> list[Round]:
        """The rounds `query(**filters)` names, loaded from their files. An unreadable file is skipped,
        logged and recorded in `problems` (never deleted)."""
        ids = self._light_ids(filters)
        if ids is None:
            ids = [e["id"] for e in self.query(**filters)]
        out: list[Round] = []
        with gc_paused():  # 182 rounds are ~10,000 tracked objects: one collection after, not dozens during
            for rid in ids:
                try:
                    out.append(self.load_round(rid))
                except StoreError as exc:
                    log.warning("%s", exc)
                    path = str(self.round_path(rid))
                    self._problem(path, str(exc).removeprefix(f"{path}: "))
        return out

    def apply_override(
        self,
        round_id: str,
        team: Team | str,
        criterion: str,
        value: int | None,
        note: str = "",
        *,
        author: str = "",
    ) -> Round:
        """Set (or with value None clear) a human's score for one criterion of one team.

        The parsed value stays in the judgment; the override, its time and note are appended to
        `judgment.overrides` (the full history). A round whose judge gave no judgment gets an empty one
        flagged needs_review, so a human can score it by hand. The file is re-read under the lock, so
        concurrent writers lose nothing.
        """
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

        return self.add_overrides(round_id, build)

    def add_overrides(self, round_id: str, build: Callable[[Round], list[Override]]) -> Round:
        """Append the overrides (scores or acceptances) that `build` makes from the round as it is on disk.

        The file is re-read under the store lock and `build` runs there, so concurrent writers lose nothing;
        `build` may raise ValueError to refuse. Overrides are indexed at once (they are rare and precious).
        """
        self._check_id("round", round_id)
        try:
            return self._add_overrides(round_id, build)
        except OSError as exc:  # nothing written: the round file is as it was
            raise self._write_failed(exc, self.rounds_dir, f"the change to round {round_id}") from None

    def _add_overrides(self, round_id: str, build: Callable[[Round], list[Override]]) -> Round:
        with self._lock:
            self._ensure_loaded()
            with self._writing():
                round_ = self.load_round(round_id)
                added = build(round_)
                if not added:
                    return round_
                assert round_.judgment is not None  # build made or found the judgment it added to
                round_.judgment.overrides.extend(added)
                # a round engine using this same store instance still holds the round without them
                with self._foreign_lock:
                    known = self._foreign.setdefault(round_id, {})
                    for override in added:
                        known[override_key(override)] = override
                path = self.round_path(round_id)
                data = round_bytes(round_)
                self._write_round_file(path, data)
                self._after_write(round_id, round_, path, data)
                self._flush_index_or_note()
        return round_

    def modify_round(self, round_id: str, change: Callable[[Round], bool]) -> Round:
        """Change a saved round as it is on disk, under the store lock, and save it atomically when `change`
        returns True (False: nothing to write). Used to add a judgment to a finished round (ebtui.core.rejudge)
        without losing what another writer saved meanwhile; `change` may raise ValueError to refuse."""
        self._check_id("round", round_id)
        with self._lock:
            self._ensure_loaded()
            with self._writing():
                round_ = self.load_round(round_id)
                if not change(round_):
                    return round_
                path = self.round_path(round_id)
                data = round_bytes(round_)
                self._write_round_file(path, data)
                self._after_write(round_id, round_, path, data)
                if self._flush_due():
                    self._flush_locked()
        return round_

    # ----------------------------------------------------------------------------------------- tournaments

    def save_tournament(self, tournament: Tournament) -> Path:
        path = self.tournament_path(tournament.id)
        try:
            with self._writing():
                self.tournaments_dir.mkdir(parents=True, exist_ok=True)
                atomic_write(path, tournament.model_dump_json(indent=2).encode("utf-8"), durable=self.durable)
        except OSError as exc:
            raise self._write_failed(exc, self.tournaments_dir, f"tournament {tournament.id}") from None
        return path

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
                self._problem(str(path), str(exc))
        out.sort(key=lambda t: t.created)
        return out

    # ----------------------------------------------------------------------------------------- the index
