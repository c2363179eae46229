"""The analysis columns' rows: one round file's facts as Parquet rows (one per judgment), many as an Arrow table, and the
reading of many round files — in this process, or in worker processes when there are many (see source.py)."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import signal
import stat
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
    data = pa.py_buffer(b"".join(encoded))
    if offsets[-1] < 2**31:  # (int32 offsets as pa.string() holds them: no cast, pyarrow.compute not imported)
        return pa.Array.from_buffers(pa.string(), len(values), [validity(valid), pa.py_buffer(
            offsets.astype(np.int32).tobytes()), data])
    return pa.Array.from_buffers(pa.large_string(), len(values), [validity(valid), pa.py_buffer(
        offsets.tobytes()), data]).cast(pa.string())


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


def rows_of(text: bytes, stamp: tuple[int, int], where: str, rid: str | None = None) -> list[dict[str, object]]:
    """The Parquet rows of one round file's bytes, one per judgment (none: not a round, or — `rid` given, the
    name of its file — a round of another id, which the store does not index either; the store lists unreadable
    files, the columns skip them)."""
    try:
        r = read_round(text)
    except ValueError as exc:
        log.debug("%s: not in the analysis columns (%s)", where, exc)
        return []
    if rid is not None and r.id != rid:
        log.debug("%s: not in the analysis columns (round id %r)", where, r.id)
        return []
    return [record_row(rec, stamp) for rec in judgment_facts(r)]


def _read_whole(path: str) -> tuple[os.stat_result, bytes]:
    """A file's stat and all its bytes, by plain system calls (a third cheaper than a buffered file object);
    OSError for anything but a regular file (opened without blocking: a FIFO never holds the reading up)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{path}: not a regular file")
        parts = [os.read(fd, st.st_size + 1)]
        while parts[-1]:  # (to the end, as read() reads: a file longer than its stat said, or a short read)
            parts.append(os.read(fd, 1 << 20))
    finally:
        os.close(fd)
    return st, parts[0] if len(parts) == 2 else b"".join(parts)


def read_chunk(paths: Sequence[str]) -> tuple[pa.Table, int]:
    """The rows of some round files as one Arrow table (files gone or unreadable skipped), and how many were
    read; a worker process's task."""
    rows = []
    read = 0
    for path in paths:
        try:
            st, text = _read_whole(path)
        except OSError as exc:
            log.debug("%s: not in the analysis columns (%s)", path, exc)
            continue
        read += 1
        rows += rows_of(text, (st.st_mtime_ns, st.st_size), path, os.path.basename(path)[:-5])
    return arrow_table(rows), read


def read_files(chunks: Sequence[Sequence[str]]) -> Generator[tuple[pa.Table, int], None, None]:
    """`read_chunk` of each chunk, yielded in order: in this process, or (from PARALLEL_FROM files on, with more
    than one core) shared with worker processes (`Reading`)."""
    reading = Reading.start(chunks)
    try:
        yield from reading.results()
    finally:
        reading.stop()


class Reading:
    """Round files being read, chunk by chunk: in this process, or (from PARALLEL_FROM files on, with more than
    one core) shared with worker processes answering with an Arrow stream (`_serve`) — forks of this process
    where the system has fork (Linux: no interpreter to start, nothing to import), else fresh interpreters given
    the chunks on stdin (`worker_main`). The chunks are handed out as they are asked for: every process (this one
    too, in `results`) takes the next chunk number from one pipe (`_Tasks`), so a process slowed by other work
    (this one writes the Parquet file) or by the machine's other programs takes fewer. A thread per worker takes
    its answers off its pipe as they come (a worker never waits for this process to be free: an answer is
    larger than a pipe holds); answers that come early wait here for their turn. The workers start reading at
    `start`, so a caller may start them before other work of its own (`early`). Should a worker fail, the chunks
    it held are read here."""

    def __init__(self, chunks: Sequence[Sequence[str]], tasks: _Tasks | None, workers: list[_Worker]) -> None:
        import queue

        self.chunks = chunks
        self.tasks = tasks
        self.workers = workers
        self.answers: queue.SimpleQueue[tuple[_Worker, tuple[int, pa.Table, int] | None]] = queue.SimpleQueue()
        self.threads = [threading.Thread(target=self._drain, args=(w,), daemon=True) for w in workers]
        for t in self.threads:  # (after every fork: a fork copies only the calling thread)
            t.start()

    @classmethod
    def start(cls, chunks: Sequence[Sequence[str]]) -> Reading:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        n = min(cores - 1, WORKERS, len(chunks) // 2)
        if sum(len(c) for c in chunks) < PARALLEL_FROM or n < 1 or os.name == "nt" or len(chunks) > _Tasks.MAX:
            return cls(chunks, None, [])
        read_chunk(chunks[0][:1])  # (what the reading builds once — the decoder, the automata — built before the forks)
        try:
            tasks = _Tasks(len(chunks))
        except OSError as exc:
            log.info("reading the round files in this process (%s)", exc)
            return cls(chunks, None, [])
        workers: list[_Worker] = []
        lists = [list(c) for c in chunks]
        for _ in range(n):
            try:
                workers.append(start_worker(lists, tasks.fd))
            except OSError as exc:
                log.info("reading the round files in this process (%s)", exc)
                break
        return cls(chunks, tasks, workers)

    def _drain(self, w: _Worker) -> None:
        while (answer := w.answer()) is not None:
            self.answers.put((w, answer))
        self.answers.put((w, None))

    def results(self) -> Generator[tuple[pa.Table, int], None, None]:
        """`read_chunk` of each chunk, in order (this process reads the chunks no worker has taken)."""
        import queue

        chunks, tasks = self.chunks, self.tasks
        got: dict[int, tuple[pa.Table, int]] = {}  # answers not yet yielded, by chunk number
        live = len(self.workers)
        nxt = 0
        while tasks is not None and nxt < len(chunks):
            if nxt in got:
                yield got.pop(nxt)
                nxt += 1
                continue
            try:
                w, answer = self.answers.get_nowait()
            except queue.Empty:
                i = tasks.take()
                if i is not None:  # (this process's turn)
                    got[i] = read_chunk(chunks[i])
                    continue
                if not live:
                    break  # no task left and no worker: the chunks missing were a failed worker's
                w, answer = self.answers.get()  # every chunk taken: wait for the workers' answers
            if answer is None:
                live -= 1
            else:
                got[answer[0]] = answer[1:]
        self.stop()
        for i in range(nxt, len(chunks)):  # what no worker answered
            yield got.pop(i) if i in got else read_chunk(chunks[i])

    def stop(self) -> None:
        """Stop the workers (their answers not yet taken are dropped)."""
        if self.tasks is not None:
            self.tasks.close()
        for w in self.workers:
            w.stop()
        for t in self.threads:
            t.join()
        for w in self.workers:
            w.close()
        self.workers, self.threads = [], []


class Early:
    """A first build's reading started before the store's index is read (`FactsSource.prefetch`): every
    `*.json` regular file the rounds folder lists, by name, in CHUNK-file chunks, read by worker processes while
    this process goes on with other work; `FactsSource.sync` takes the rows of the files its index names."""

    def __init__(self, paths: list[str], reading: Reading) -> None:
        self.paths = paths
        self.reading = reading
        self.chunks = reading.chunks

    @classmethod
    def start(cls, rounds: str) -> Early | None:
        """None: too few files for workers, or none could start (the sync reads as without it)."""
        try:
            with os.scandir(rounds) as it:
                names = sorted(e.name for e in it if e.name.endswith(".json") and not e.name.startswith(".")
                               and e.is_file())
        except OSError:
            return None
        if len(names) < PARALLEL_FROM:
            return None
        paths = [os.path.join(rounds, n) for n in names]
        reading = Reading.start([paths[i:i + CHUNK] for i in range(0, len(paths), CHUNK)])
        if not reading.workers:
            reading.stop()
            return None
        import atexit

        atexit.register(reading.stop)  # (a process that ends before its sync leaves no worker behind)
        return cls(paths, reading)

    def stop(self) -> None:
        import atexit

        self.reading.stop()
        atexit.unregister(self.reading.stop)


class _Tasks:
    """The chunk numbers still to read, in one pipe every reading process takes from (4 bytes each, all written
    before any process reads, the writing end closed: a read never blocks, and the empty pipe says "done")."""

    #: chunk numbers a pipe holds without a reader (64 KiB / 4; Linux's default pipe size)
    MAX = 16384

    def __init__(self, count: int) -> None:
        """OSError: the pipe cannot hold them all (a system that gives small pipes)."""
        r, w = os.pipe()
        try:
            data = array("i", range(count)).tobytes()
            os.set_blocking(w, False)  # (a full pipe refuses the rest instead of waiting for a reader)
            if os.write(w, data) != len(data):
                raise OSError("the tasks pipe holds fewer chunk numbers")
        except OSError:
            os.close(r)
            raise
        finally:
            os.close(w)
        self.fd = r

    def take(self) -> int | None:
        return _take(self.fd)

    def close(self) -> None:
        """(Once: a descriptor number closed twice could be another file's by then.)"""
        fd, self.fd = self.fd, -1
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)


def _take(fd: int) -> int | None:
    """The next chunk number from the tasks pipe (None: none left)."""
    data = os.read(fd, 4)
    return array("i", data)[0] if len(data) == 4 else None


class _Worker:
    """A worker process of `Reading`: its Arrow stream (`out`, buffered: read by a thread of its own), its answers
    and how to stop it."""

    def __init__(self, out: BinaryIO, stop: Callable[[], None]) -> None:
        self.out = out
        self._stop = stop
        self._reader: pa.RecordBatchStreamReader | None = None

    def answer(self) -> tuple[int, pa.Table, int] | None:
        """The next chunk it read: (chunk number, its rows, files read); None when it has no more (or failed)."""
        import pyarrow as pa

        try:
            if self._reader is None:
                self._reader = pa.ipc.open_stream(pa.PythonFile(self.out, mode="r"))
            batch, meta = self._reader.read_next_batch_with_custom_metadata()
            return int(meta[b"chunk"]), pa.Table.from_batches([batch]), int(meta[b"read"])
        except (OSError, ValueError, StopIteration, KeyError, pa.ArrowException) as exc:
            if not isinstance(exc, StopIteration):
                log.info("a worker reading round files failed (%s): its chunks are read here", exc)
            return None

    def stop(self) -> None:
        """Kill it (its pipe then ends: the thread taking its answers ends too)."""
        self._stop()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.out.close()


def _forked(chunks: list[list[str]], tasks: int) -> _Worker:
    """A fork of this process reading the chunks it takes from the `tasks` pipe (it shares this process's
    modules: no start-up to pay)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: serve, then leave without running anything of the parent's (atexit, buffers)
        code = 1
        try:
            os.close(r)
            with open(w, "wb") as out:
                _serve(chunks, tasks, out)
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


def _spawned(chunks: list[list[str]], tasks: int) -> _Worker:
    """A fresh interpreter reading the chunks (given on its stdin) it takes from the `tasks` pipe (its
    descriptor passed on)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}  # the modules this process has
    proc = subprocess.Popen(
        [sys.executable, "-c", "from ebtui.core.analysis.source_read import worker_main; worker_main()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, bufsize=0,
        pass_fds=(tasks,))
    # (from a thread: the worker reads its stdin only once it has started, this process reads meanwhile)
    threading.Thread(target=_send, args=(proc, {"chunks": chunks, "tasks": tasks}), daemon=True).start()

    def stop() -> None:
        proc.kill()
        proc.wait()  # (its stdin is the sender thread's: killed, the worker breaks that pipe)

    assert proc.stdout is not None
    return _Worker(cast("BinaryIO", io.BufferedReader(cast("io.RawIOBase", proc.stdout))), stop)


def start_worker(chunks: list[list[str]], tasks: int) -> _Worker:
    """A worker for these chunks (taking their numbers from the `tasks` pipe): forked on Linux while this
    process runs no other Python thread (`ebtui report`; a fork copies only the calling thread, and a lock
    another thread holds stays held in the child), else a fresh interpreter (the app's analysis runs in a
    thread worker)."""
    return _forked(chunks, tasks) if FORK and threading.active_count() == 1 else _spawned(chunks, tasks)


#: workers may be forks of this process (Linux), else fresh interpreters
FORK = sys.platform.startswith("linux") and hasattr(os, "fork")


def _send(proc: subprocess.Popen[bytes], job: dict[str, object]) -> None:
    """A worker's job onto its stdin (a worker gone: it answers nothing, and `read_files` reads here)."""
    assert proc.stdin is not None
    with contextlib.suppress(OSError, ValueError), proc.stdin:
        proc.stdin.write(json.dumps(job).encode())


def _serve(chunks: list[list[str]], tasks: int, out: BinaryIO) -> None:
    """For each chunk number taken from the `tasks` pipe, one record batch of that chunk's rows onto `out` (an
    Arrow stream), with the chunk's number and how many files were read as the batch's metadata."""
    import pyarrow as pa

    with pa.ipc.new_stream(out, schema()) as stream:
        while (i := _take(tasks)) is not None:
            table, read = read_chunk(chunks[i])
            batch = pa.RecordBatch.from_arrays([c.combine_chunks() for c in table.columns], schema=table.schema)
            stream.write_batch(batch, custom_metadata={"read": str(read), "chunk": str(i)})
            out.flush()  # (the whole answer now: `read_files` reads it once some of it is there)


def worker_main() -> None:
    """A fresh-interpreter worker of `read_files`: the chunks of round-file paths and the tasks pipe's
    descriptor (JSON) on stdin, its Arrow stream on stdout (`_serve`)."""
    job = json.loads(sys.stdin.buffer.read())
    _serve(job["chunks"], int(job["tasks"]), sys.stdout.buffer)
