"""The results store: one human-readable JSON file per round (the source of truth, written atomically) and
a TinyDB index over them, batched, reconciled on open and shared safely by several processes under a file
lock (`lock.py`). `ResultsStore` composes the parts (lock, round files, index, text cache, saver).
Layout, crash safety and the index's rules: docs/STORE.md; the modules: docs/ARCHITECTURE.md.
"""

from ebtui.core.facts import parse_criterion as normalise_criterion
from ebtui.core.facts import parse_team as normalise_team
from ebtui.core.store.entries import (
    INDEX_FORMAT,
    LIGHT_FIELDS,
    ROLES,
    entry_scores,
    entry_status,
    index_entry,
    mark_interrupted,
)
from ebtui.core.store.files import StoreError, StoreWriteError, WriteAbandoned, atomic_write
from ebtui.core.store.query import FILTERS, RoundFilter
from ebtui.core.store.results_store import ResultsStore
from ebtui.core.store.saver import BackgroundSaver

__all__ = [
    "FILTERS",
    "INDEX_FORMAT",
    "LIGHT_FIELDS",
    "ROLES",
    "BackgroundSaver",
    "ResultsStore",
    "RoundFilter",
    "StoreError",
    "StoreWriteError",
    "WriteAbandoned",
    "atomic_write",
    "entry_scores",
    "entry_status",
    "index_entry",
    "mark_interrupted",
    "normalise_criterion",
    "normalise_team",
]
