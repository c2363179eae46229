"""The analysis columns' file written as a first build reads the round files (`StreamedFile`), and what marks
a file as this version's (`lexicon_stamp`, FACTS_VERSION in the schema's metadata); see source.py."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from ebtui.core.analysis.frame import FACTS_VERSION
from ebtui.core.analysis.source_read import schema

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq

log = logging.getLogger("ebtui.core.analysis")

#: rows per Parquet row group (the quotes a report shows are read group by group)
ROW_GROUP = 8192


def lexicon_stamp() -> str:
    """A hash of the lexicons and rules the text facts come from: a change rebuilds the file."""
    from ebtui.core import frameworks

    h = hashlib.sha256()
    for name in ("FRAMEWORKS", "FRAMEWORK_LEXICON", "CONSISTENCY_CUES"):
        h.update(repr(getattr(frameworks, name, None)).encode())
    return h.hexdigest()[:16]



class StreamedFile:
    """The facts file written part by part as a first build reads the round files (row groups of ROW_GROUP
    rows, as `_write_file` writes them), into a temporary file renamed over the old one at the end."""

    def __init__(self, path: Path, writer: pq.ParquetWriter, tmp: Path) -> None:
        self.path, self.writer, self.tmp = path, writer, tmp
        self.pending: list[pa.Table] = []
        self.rows = 0
        self.failed = False
        self.stamp: tuple[int, int] | None = None

    @classmethod
    def open(cls, path: Path) -> StreamedFile | None:
        """None: the file cannot be written here (a read-only store: the columns live in memory only)."""
        import pyarrow.parquet as pq

        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            sch = schema().with_metadata({"facts_version": str(FACTS_VERSION), "lexicon": lexicon_stamp()})
            return cls(path, pq.ParquetWriter(tmp, sch, compression="zstd"), tmp)
        except OSError as exc:
            log.debug("%s: cannot write (%s)", path, exc)
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            return None

    def add(self, table: pa.Table) -> pa.Table:
        """Write `table`'s rows (whole row groups as they fill); returns it without its quotes, in buffers of
        its own (a worker's batch is one buffer: a column sliced from it would keep the quotes alive)."""
        import pyarrow as pa

        if not self.failed:
            self.pending.append(table)
            self.rows += table.num_rows
            if self.rows >= ROW_GROUP:
                self._write(whole_groups=True)
        rest = table.drop_columns(["quotes"])
        return pa.Table.from_arrays([pa.concat_arrays(c.chunks) if c.num_chunks else c for c in rest.columns],
                                    schema=rest.schema)

    def _write(self, whole_groups: bool) -> None:
        import pyarrow as pa

        table = pa.concat_tables(self.pending)
        cut = table.num_rows - table.num_rows % ROW_GROUP if whole_groups else table.num_rows
        try:
            if cut:
                self.writer.write_table(table.slice(0, cut), row_group_size=ROW_GROUP)
        except OSError as exc:
            log.debug("%s: cannot write (%s)", self.path, exc)
            self.failed = True
        rest = table.slice(cut)
        self.pending, self.rows = ([rest] if rest.num_rows else []), rest.num_rows

    def close(self) -> bool:
        """Finish the file and put it in place; False: it could not be written (nothing is left behind)."""
        if self.pending and not self.failed:
            self._write(whole_groups=False)
        try:
            self.writer.close()
            if self.failed:
                raise OSError("a part could not be written")
            os.replace(self.tmp, self.path)
            st = os.stat(self.path)
            self.stamp = (st.st_mtime_ns, st.st_size)
            return True
        except OSError as exc:
            log.debug("%s: cannot write (%s)", self.path, exc)
            with contextlib.suppress(OSError):
                os.unlink(self.tmp)
            return False

    def abort(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.writer.close()
        with contextlib.suppress(OSError):
            os.unlink(self.tmp)
