"""Save listeners: code outside the store (e.g. the analysis columns, ebtui.core.analysis.source) that wants
to hear of every round a store instance writes — saves and overrides alike — without the store knowing it.
A listener gets (round id, the file's bytes as written, the file's stamp (inode, mtime_ns, size)); it runs on
the saving thread under the store's lock, so it must be quick (record, never compute), and what it raises is
logged and ignored: a listener can never fail a save."""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable

log = logging.getLogger("ebtui.core.store")

Listener = Callable[[str, bytes, tuple[int, int, int]], None]
_LISTENERS: weakref.WeakKeyDictionary[object, list[Listener]] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def add_save_listener(store: object, listener: Listener) -> None:
    with _LOCK:
        _LISTENERS.setdefault(store, []).append(listener)


def remove_save_listener(store: object, listener: Listener) -> None:
    with _LOCK:
        got = _LISTENERS.get(store)
        if got and listener in got:
            got.remove(listener)


def notify_saved(store: object, rid: str, data: bytes, stamp: tuple[int, int, int]) -> None:
    """Tell the store's listeners a round file was written (called by the store after each write)."""
    with _LOCK:
        listeners = list(_LISTENERS.get(store) or ())
    for fn in listeners:
        try:
            fn(rid, data, stamp)
        except Exception:  # noqa: BLE001 - a listener never fails a save
            log.exception("save listener failed for round %s", rid)
