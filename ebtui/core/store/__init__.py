"""The results store (ebtui.core.store): one human-readable JSON file per round (the source of truth) and a TinyDB index.

Layout under the store root (default ./saved, or --store / $EBTUI_STORE):
  rounds/<round_id>.json         one JSON file per round (indent=2), rewritten atomically after each phase
  tournaments/<id>.json          one file per tournament
  index.json                     a plain TinyDB database, table "rounds": one small document per round
                                 (field "id" is the round id); rebuilt from the round files whenever it
                                 is lost, corrupt or stale
  index.check.json               a small note of when index.json was last known to match the round files
                                 (index.json's stamp, the rounds folder's mtime and file count)
  .unindexed-<pid>-<n>           one empty marker per store instance with saves index.json lacks yet
  .lock                          an fcntl.flock lock file serialising writers across processes

Nothing is created until the first write.

Why the index is batched: TinyDB rewrites its whole file on every write, so writing it on every save would
make saving quadratic. The store keeps the index in memory, applies each save there, and writes index.json
only every so many saves (a fraction of the index size, so the cost per save stays flat), after a few
seconds, on an override, and on close()/exit. A crash can therefore leave index.json behind the round
files; on open the store compares each round file's size and mtime with its index document and re-reads
only the files that changed, so nothing saved is ever lost from queries.

Opening fast: that comparison stats every round file (a second at 10,000 rounds), so it is skipped when
index.check.json shows nothing can have changed since index.json was written: no `.unindexed-*` marker
exists (every writer creates its marker *before* its first round write after an index write and removes
it only once index.json holds all its saves — so a writer that crashed, or is still running with saves
not yet indexed, always forces the full check), index.json is the very file the note describes (inode,
mtime, size), and the rounds folder has the same mtime and number of round files (a file added, deleted
or renamed into place — every save is one — changes both). A round file rewritten *in place* by another
tool is not noticed by that check: `refresh()` or `rebuild_index()` (`ebtui rounds reindex`) picks it up.

Saving off the caller's thread: `background_saver()` gives the store's one BackgroundSaver (a writer
thread); the round engine uses it, see BackgroundSaver for what a crash can lose.

Several processes may write one store at once (a tournament and the TUI): every write to a round file and
every index write happens under an exclusive flock on `.lock`; index writes merge with what another process
wrote (per round, the document written last wins); and a save that finds the round file changed by someone
else since its own last write keeps the overrides it finds there, so a human's override made while the
round engine still holds the round in memory is never lost.

Where things live: results_store.py (ResultsStore, the facade: paths, locking, lifetime), round_files.py
(save/load/override, tournaments), index.py (index.json, index.check.json, reconciliation), query.py (the
one filter engine), entries.py (the index document per round), files.py (atomic writes), saver.py (the
background writer thread).
"""

from ebtui.core.store.entries import (
    INDEX_FORMAT,
    LIGHT_FIELDS,
    ROLES,
    entry_scores,
    entry_status,
    index_entry,
    mark_interrupted,
    normalise_criterion,
    normalise_team,
)
from ebtui.core.store.files import StoreError, StoreWriteError, _Abandoned, atomic_write
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
    "_Abandoned",
    "atomic_write",
    "entry_scores",
    "entry_status",
    "index_entry",
    "mark_interrupted",
    "normalise_criterion",
    "normalise_team",
]
