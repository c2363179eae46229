"""Audit files: `<store>/audits/<audit id>.json`, one per human audit (the draw and the human ratings), written
atomically under the store's lock. The store keeps their bytes only; what they hold is ebtui.core.audit's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ebtui.core.store.files import StoreError, atomic_write, check_id
from ebtui.core.store.lock import StoreLock


class AuditFiles:
    """The audits folder of a store: read, list and change an audit's file (read-modify-write under the lock,
    so the app and `ebtui audit import` never lose each other's ratings)."""

    def __init__(self, root: Path, lock: StoreLock, *, durable: bool) -> None:
        self.dir = root / "audits"
        self.lock = lock
        self.durable = durable

    def path(self, audit_id: str) -> Path:
        return self.dir / f"{check_id('audit', audit_id)}.json"

    def ids(self) -> list[str]:
        """The audit ids in the store, sorted (hidden and temporary files skipped)."""
        if not self.dir.is_dir():
            return []
        return sorted(p.stem for p in self.dir.glob("*.json") if not p.name.startswith("."))

    def read(self, audit_id: str) -> bytes:
        path = self.path(audit_id)
        try:
            return path.read_bytes()
        except FileNotFoundError:
            raise StoreError(f"audit {audit_id!r} not found: {path} does not exist") from None
        except OSError as exc:
            raise StoreError(f"{path}: cannot be read ({exc.strerror or exc})") from None

    def change(self, audit_id: str, change: Callable[[bytes | None], bytes | None]) -> bytes | None:
        """`change` gets the file's bytes as they are on disk (None: no such audit yet) under the store lock
        and returns the new bytes (None: write nothing); the write is atomic. Returns what the file holds."""
        path = self.path(audit_id)
        with self.lock.mutex, self.lock.writing():
            try:
                old: bytes | None = path.read_bytes()
            except FileNotFoundError:
                old = None
            new = change(old)
            if new is None:
                return old
            self.dir.mkdir(parents=True, exist_ok=True)
            atomic_write(path, new, durable=self.durable)
            return new
