"""The analysis columns' rows: one round file's facts as Parquet rows (one per judgment), many as an Arrow table, and the
reading of many round files — in this process, or in worker processes when there are many (see source.py)."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import threading
from array import array
from collections.abc import Callable, Generator, Mapping, Sequence
from typing import TYPE_CHECKING, BinaryIO, cast

import numpy as np

from ebtui.core.analysis.frame import JSON_COLUMNS, NC, SLOTS, STR_COLUMNS, RoundFacts, judgment_facts
from ebtui.core.analysis.round_decode import read_round

if TYPE_CHECKING:
    import pyarrow as pa

log = logging.getLogger("ebtui.core.analysis")

#: round files read by worker processes from this many on (fewer: in this process); files per task; workers
PARALLEL_FROM = 1000
CHUNK = 500
WORKERS = 4


def schema() -> pa.Schema:
    import pyarrow as pa

    fields = [pa.field(c, pa.string()) for c in STR_COLUMNS]
    fields += [pa.field("writer", pa.string()), pa.field("ts", pa.float64()), pa.field("timestamp", pa.string()),
               pa.field("judged", pa.bool_()), pa.field("needs_review", pa.bool_()),
               pa.field("parsed", pa.binary(2 * NC)), pa.field("effective", pa.binary(2 * NC)),
               pa.field("text_len", pa.binary(4 * len(SLOTS))), pa.field("reused", pa.binary(4)),
               pa.field("fw_bits", pa.binary(2 * len(SLOTS)))]
    fields += [pa.field(c, pa.string()) for c in JSON_COLUMNS]
    fields += [pa.field("own_missing", pa.bool_()), pa.field("style", pa.binary(4 * 4))]
    fields += [pa.field("mtime_ns", pa.int64()), pa.field("size", pa.int64())]
    return pa.schema(fields)


# Arrow arrays are built from raw buffers: pa.array() on Python or numpy values imports pandas (a second
# on a cold start) to check for pandas objects.


def validity(valid: np.ndarray) -> pa.Buffer | None:
    import pyarrow as pa

    return None if valid.all() else pa.py_buffer(np.packbits(valid, bitorder="little").tobytes())


def arrow_strings(values: Sequence[str | None]) -> pa.Array:
    import pyarrow as pa

    valid = np.array([v is not None for v in values], dtype=bool)
    encoded = [v.encode("utf-8") if v is not None else b"" for v in values]
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    return pa.Array.from_buffers(pa.large_string(), len(values), [validity(valid), pa.py_buffer(
        offsets.tobytes()), pa.py_buffer(b"".join(encoded))]).cast(pa.string())


def arrow_numbers(values: np.ndarray, type_: pa.DataType) -> pa.Array:
    import pyarrow as pa

    if type_ == pa.bool_():
        data = np.packbits(np.asarray(values, dtype=bool), bitorder="little").tobytes()
    else:
        data = np.ascontiguousarray(values).tobytes()
    return pa.Array.from_buffers(type_, len(values), [None, pa.py_buffer(data)])


def arrow_table(rows: Sequence[Mapping[str, object]]) -> pa.Table:
    import pyarrow as pa

    sch = schema()
    arrays = []
    for f in sch:
        vals = [r[f.name] for r in rows]
        if pa.types.is_string(f.type):
            arrays.append(arrow_strings(cast("list[str | None]", vals)))
        elif pa.types.is_fixed_size_binary(f.type):
            arrays.append(pa.Array.from_buffers(f.type, len(vals), [None, pa.py_buffer(b"".join(cast("list[bytes]", vals)))]))
        elif f.type == pa.float64():
            arrays.append(arrow_numbers(np.asarray(vals, dtype=np.float64), f.type))
        elif f.type == pa.int64():
            arrays.append(arrow_numbers(np.asarray(vals, dtype=np.int64), f.type))
        else:
            arrays.append(arrow_numbers(np.asarray(vals, dtype=bool), f.type))
    return pa.Table.from_arrays(arrays, schema=sch)


def record_row(rec: RoundFacts, stamp: tuple[int, int]) -> dict[str, object]:
    """A facts record as one Parquet row (fixed-size arrays as raw bytes, native byte order as numpy writes
    them: int8 scores 0-10, int32 lengths and style counts, int16 framework bits, one byte per bool)."""
    parsed, effective = rec["parsed"], rec["effective"]
    if parsed is not None and effective is not None:  # (round_facts sets both or neither)
        p_bytes, e_bytes = bytes(v for row in parsed for v in row), bytes(v for row in effective for v in row)
    else:
        p_bytes = e_bytes = bytes(2 * NC)
    fields: Mapping[str, object] = rec
    row = {c: fields[c] for c in (*STR_COLUMNS, "ts", "timestamp", "judged", "needs_review", *JSON_COLUMNS,
                                  "own_missing")}
    row.update(writer=json.dumps(rec["writer"]) if rec["writer"] is not None else None,
               parsed=p_bytes, effective=e_bytes,
               text_len=array("i", rec["text_len"]).tobytes(), reused=bytes(map(bool, rec["reused"])),
               fw_bits=array("h", rec["fw_bits"]).tobytes(), style=array("i", rec["style"]).tobytes(),
               mtime_ns=stamp[0], size=stamp[1])
    return row


def rows_of(text: bytes, stamp: tuple[int, int], where: str) -> list[dict[str, object]]:
    """The Parquet rows of one round file's bytes, one per judgment (none: not a round; the store lists
    unreadable files, the columns skip them)."""
    try:
        r = read_round(text)
    except ValueError as exc:
        log.debug("%s: not in the analysis columns (%s)", where, exc)
        return []
    return [record_row(rec, stamp) for rec in judgment_facts(r)]


def read_chunk(paths: Sequence[str]) -> tuple[pa.Table, int]:
    """The rows of some round files as one Arrow table (files gone or unreadable skipped), and how many were
    read; a worker process's task."""
    rows = []
    read = 0
    for path in paths:
        try:
            with open(path, "rb") as fh:
                st = os.fstat(fh.fileno())
                text = fh.read()
        except OSError as exc:
            log.debug("%s: not in the analysis columns (%s)", path, exc)
            continue
        read += 1
        rows += rows_of(text, (st.st_mtime_ns, st.st_size), path)
    return arrow_table(rows), read


def read_files(chunks: Sequence[Sequence[str]]) -> Generator[tuple[pa.Table, int], None, None]:
    """`read_chunk` of each chunk, in order: in this process, or (from PARALLEL_FROM files on, with more than
    one core) shared with worker processes answering with an Arrow stream (`_serve`) — forks of this process
    where the system has fork (Linux: no interpreter to start, nothing to import), else fresh interpreters
    given their chunks on stdin (`worker_main`); this process takes every (workers + 1)th chunk, starting
    with the first, while the workers do the next ones. Should a worker fail, the chunks left are read here."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    n = min(cores - 1, WORKERS, len(chunks) // 2)
    if sum(len(c) for c in chunks) < PARALLEL_FROM or n < 1:
        yield from (read_chunk(c) for c in chunks)
        return
    import pyarrow as pa

    workers: list[_Worker] = []
    readers: list[pa.RecordBatchStreamReader] = []
    done = 0
    try:
        for k in range(n):
            workers.append(start_worker([list(c) for c in chunks[k + 1::n + 1]]))
        while done < len(chunks):
            k = done % (n + 1) - 1  # -1: this process's chunk
            if k < 0:
                got = read_chunk(chunks[done])
            else:
                if len(readers) <= k:
                    readers.append(pa.ipc.open_stream(workers[k].out))
                batch, meta = readers[k].read_next_batch_with_custom_metadata()
                got = pa.Table.from_batches([batch]), int(meta[b"read"])
            done += 1
            yield got
    except (OSError, ValueError, StopIteration, pa.ArrowException) as exc:
        log.info("reading the round files in this process (%s)", exc)
        yield from (read_chunk(c) for c in chunks[done:])
    finally:
        for w in workers:
            w.stop()


class _Worker:
    """A worker process of `read_files`: its Arrow stream (`out`) and how to stop it."""

    def __init__(self, out: BinaryIO, stop: Callable[[], None]) -> None:
        self.out = out
        self._stop = stop

    def stop(self) -> None:
        self._stop()
        with contextlib.suppress(OSError):
            self.out.close()


def _forked(chunks: list[list[str]]) -> _Worker:
    """A fork of this process reading `chunks` (it shares this process's modules: no start-up to pay)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: serve, then leave without running anything of the parent's (atexit, buffers)
        code = 1
        try:
            os.close(r)
            with open(w, "wb") as out:
                _serve(chunks, out)
            code = 0
        finally:
            os._exit(code)
    os.close(w)

    def stop() -> None:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.waitpid(pid, 0)

    return _Worker(open(r, "rb"), stop)


def _spawned(chunks: list[list[str]]) -> _Worker:
    """A fresh interpreter reading `chunks` (given on its stdin)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}  # the modules this process has
    proc = subprocess.Popen(
        [sys.executable, "-c", "from ebtui.core.analysis.source_read import worker_main; worker_main()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    # (from a thread: the worker reads its stdin only once it has started, this process reads meanwhile)
    threading.Thread(target=_send, args=(proc, chunks), daemon=True).start()

    def stop() -> None:
        proc.kill()
        proc.wait()  # (its stdin is the sender thread's: killed, the worker breaks that pipe)

    assert proc.stdout is not None
    return _Worker(cast("BinaryIO", proc.stdout), stop)


def start_worker(chunks: list[list[str]]) -> _Worker:
    """A worker for these chunks: forked on Linux while this process runs no other Python thread (`ebtui
    report`; a fork copies only the calling thread, and a lock another thread holds stays held in the
    child), else a fresh interpreter (the app's analysis runs in a thread worker)."""
    return _forked(chunks) if FORK and threading.active_count() == 1 else _spawned(chunks)


#: workers may be forks of this process (Linux), else fresh interpreters
FORK = sys.platform.startswith("linux") and hasattr(os, "fork")


def _send(proc: subprocess.Popen[bytes], chunks: list[list[str]]) -> None:
    """A worker's chunks onto its stdin (a worker gone: it answers nothing, and `read_files` reads here)."""
    assert proc.stdin is not None
    with contextlib.suppress(OSError, ValueError), proc.stdin:
        proc.stdin.write(json.dumps(chunks).encode())


def _serve(chunks: list[list[str]], out: BinaryIO) -> None:
    """For each chunk of round-file paths, one record batch of their rows onto `out` (an Arrow stream), with
    how many files were read as the batch's metadata."""
    import pyarrow as pa

    with pa.ipc.new_stream(out, schema()) as stream:
        for paths in chunks:
            table, read = read_chunk(paths)
            batch = pa.RecordBatch.from_arrays([c.combine_chunks() for c in table.columns], schema=table.schema)
            stream.write_batch(batch, custom_metadata={"read": str(read)})


def worker_main() -> None:
    """A fresh-interpreter worker of `read_files`: chunks of round-file paths (JSON) on stdin, its Arrow
    stream on stdout (`_serve`)."""
    _serve(json.loads(sys.stdin.buffer.read()), sys.stdout.buffer)
