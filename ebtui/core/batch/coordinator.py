"""Turning a tournament's calls into provider batches, wave by wave: a batch model's client
(`BatchingClient`) hands each request to the `BatchCoordinator`, which gathers the requests until the calls
go quiet, submits them as one batch (recorded in the ledger), polls it and hands each round its own item's
answer. A resumed run finds its items in the ledger instead of submitting again; a failed item fails its
phase or is retried in a later batch. See docs/BATCH.md.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Unpack

from ebtui.core.batch.ledger import BatchLedger, BatchRecord, Intent, ItemRecord
from ebtui.core.views import numbers as num
from ebtui.providers.base import (
    CallOptions,
    Completion,
    Delta,
    ModelClient,
    ProviderError,
    StreamItem,
    WrappingClient,
)
from ebtui.providers.batch import BatchClient, BatchRequest, BatchResults

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BatchSettings:
    #: first poll this long after a submission, then each wait 1.5x longer, up to poll_max_s
    poll_first_s: float = 2.0
    poll_max_s: float = 60.0
    #: a wave is submitted once no new request arrived for this long (or after gather_max_s)
    gather_s: float = 1.0
    gather_max_s: float = 30.0
    #: items per batch (OpenAI takes 50,000, Anthropic 100,000; Gemini's inline requests are size-bound)
    max_items: int = 5000
    #: tries per item, the first included: a failed or expired item is submitted again, alone
    item_attempts: int = 3
    #: tries for a submission that fails with a retryable error (rate limit, server, connection)
    submit_attempts: int = 5


_PHASE_MARKS = (
    ("# Your task: the judgment", "judgment"),
    ("# Your task: Team A's rebuttal", "rebuttal"),
    ("# Your task: Team A's consistency test", "consistency"),
    ("# Your task: Team B's response", "response"),
    ("# Your task: Team A's presentation", "presentation"),
)


def phase_of(prompt: str) -> str:
    """Which phase of a round a prompt is (from the prompts' task headings), for the ledger and the TUI."""
    for mark, phase in _PHASE_MARKS:
        if mark in prompt:
            return phase
    return "call"


def request_key(model: str, system_prompt: str, prompt: str, json_schema: Mapping[str, object] | None,
                max_tokens: int | None) -> str:
    blob = json.dumps([model, system_prompt, prompt, json_schema, max_tokens], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:24]


def _ensure_task(tasks: dict[str, asyncio.Task[None]], key: str, work: Callable[[], Awaitable[None]], what: str,
                 on_error: Callable[[Exception], None]) -> None:
    """Start `work` as the task for `key` unless it is running. An unexpected exception (a bug) is logged and
    handed to `on_error`, which fails the rounds waiting on it: none waits forever."""
    task = tasks.get(key)
    if task is not None and not task.done():
        return

    async def guarded() -> None:
        try:
            await work()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("%s failed", what)
            on_error(exc)

    tasks[key] = asyncio.create_task(guarded())


@dataclass
class _Pending:
    cid: str
    request: BatchRequest
    future: asyncio.Future[Completion | ProviderError]


class BatchCoordinator:
    """One tournament's batches over all its batch models. `client(name, stream_client)` wraps a model."""

    def __init__(
        self,
        ledger: BatchLedger,
        clients: dict[str, BatchClient],
        settings: BatchSettings | None = None,
        *,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        self.ledger = ledger
        self.clients = clients
        self.settings = settings or BatchSettings()
        self.on_change = on_change or (lambda: None)
        self._queues: dict[str, list[_Pending]] = {}
        self._last_enqueue: dict[str, float] = {}
        self._flushers: dict[str, asyncio.Task[None]] = {}
        self._pollers: dict[str, asyncio.Task[None]] = {}
        self._waiters: dict[str, list[asyncio.Future[Completion | ProviderError]]] = {}
        self._claimed: set[str] = set()  # items handed to (or awaited by) a request of this run
        self._results: dict[str, BatchResults] = {}  # results read in this run, by batch id
        self.submitted: list[str] = []  # batch ids submitted by this run
        self._recovery_lock = asyncio.Lock()
        self._stale_intents = list(ledger.intents)  # left by an earlier run that was killed mid-submission
        self._recovered = not self._stale_intents

    # -- the model-facing side --------------------------------------------------------------------------
    def client(self, name: str, stream_client: ModelClient) -> BatchingClient:
        return BatchingClient(self, name, stream_client)

    async def complete(self, model: str, prompt: str, system_prompt: str, *, json_schema: dict[str, Any] | None,
                       max_tokens: int | None) -> Completion:
        """The model's answer through its batch API. Raises ProviderError (after item retries)."""
        if not self._recovered:  # every request waits for it: an adopted batch's items are reusable
            await self._recover_intents()
        key = request_key(model, system_prompt, prompt, json_schema, max_tokens)
        last: ProviderError | None = None
        for attempt in range(1, self.settings.item_attempts + 1):
            cid = self.ledger.reusable(key, self._claimed)
            fut: asyncio.Future[Completion | ProviderError] = asyncio.get_running_loop().create_future()
            if cid is not None:  # an item of an earlier run (or wave) is pending or answered: wait for it
                self._claimed.add(cid)
                self._waiters.setdefault(cid, []).append(fut)
                batch = self.ledger.items[cid].batch
                if batch:
                    self._ensure_poller(batch)
            else:
                cid = f"{key}-{self.ledger.occurrences(key)}"
                self._claimed.add(cid)
                self.ledger.add_item(cid, ItemRecord(key=key, model=model, phase=phase_of(prompt)))
                req = BatchRequest(cid, system_prompt, prompt, json_schema, max_tokens)
                self._enqueue(model, _Pending(cid, req, fut))
            result = await fut
            if isinstance(result, Completion):
                result.attempts = attempt
                return result
            last = result
            last.attempts = attempt
            if not result.retryable:
                break
            log.info("%s: batch item %s failed (%s); submitting it again", model, cid, result)
        assert last is not None
        raise last

    # -- gathering and submitting ----------------------------------------------------------------------
    def _enqueue(self, model: str, p: _Pending) -> None:
        self._queues.setdefault(model, []).append(p)
        self._last_enqueue[model] = time.monotonic()
        _ensure_task(self._flushers, model, lambda: self._gather_and_submit(model), f"{model}: batch submission",
                     lambda exc: self._fail_queue(model, exc))

    def _fail_queue(self, model: str, exc: Exception) -> None:
        for p in self._queues.pop(model, []):
            if not p.future.done():
                p.future.set_result(ProviderError("server", f"batch submission: {type(exc).__name__}: {exc}"))

    async def _gather_and_submit(self, model: str) -> None:
        s = self.settings
        started = time.monotonic()
        while True:
            quiet = time.monotonic() - self._last_enqueue.get(model, 0.0)
            if quiet >= s.gather_s or time.monotonic() - started >= s.gather_max_s:
                break
            await asyncio.sleep(max(0.05, s.gather_s - quiet))
        limit = self.clients[model].max_bytes
        while self._queues.get(model):
            queue = self._queues[model]
            n = size = 0
            while n < len(queue) and n < s.max_items:
                size += len(queue[n].request.prompt) + len(queue[n].request.system_prompt) + 1000
                if n and size > limit:
                    break
                n += 1
            chunk, self._queues[model] = queue[:n], queue[n:]
            await self._submit(model, chunk)

    async def _submit(self, model: str, chunk: list[_Pending]) -> None:
        client = self.clients[model]
        wave = self.ledger.next_wave(model)
        label = f"ebtui-{self.ledger.tournament_id}-{model}-w{wave}"
        cids = [p.cid for p in chunk]
        intent = Intent(label=label, model=model, items=cids, at=time.time())
        self.ledger.intents.append(intent)
        self.ledger.save()
        batch_id: str | None = None
        error: ProviderError | None = None
        for attempt in range(1, self.settings.submit_attempts + 1):
            try:
                batch_id = await client.submit([p.request for p in chunk], label=label)
                break
            except ProviderError as exc:
                error = exc
                if not exc.retryable or attempt == self.settings.submit_attempts:
                    break
                delay = exc.retry_after or min(60.0, 2.0 ** attempt)
                log.warning("%s: batch submission failed (%s); trying again in %s s", model, exc, num.fixed(delay, 0))
                await asyncio.sleep(delay)
        self.ledger.intents.remove(intent)
        if batch_id is None:
            assert error is not None
            for p in chunk:  # nothing was submitted: the items are not in any batch
                self.ledger.drop_item(p.cid)
                self._claimed.discard(p.cid)
                p.future.set_result(ProviderError(error.kind, f"batch submission failed: {error.message}",
                                                  status=error.status))
            self.ledger.save()
            self.on_change()
            return
        phases: dict[str, int] = {}
        for p in chunk:
            it = self.ledger.items[p.cid]
            it.batch = batch_id
            phases[it.phase] = phases.get(it.phase, 0) + 1
            self._waiters.setdefault(p.cid, []).append(p.future)
        self.ledger.batches[batch_id] = BatchRecord(
            id=batch_id, model=model, provider=client.provider, label=label, wave=wave,
            submitted_at=time.time(), items=cids, total=len(cids), phases=phases,
        )
        self.ledger.save()  # the id is on disk before the first poll
        self.submitted.append(batch_id)
        self.on_change()
        self._ensure_poller(batch_id)

    async def _recover_intents(self) -> None:
        """A submission interrupted between the provider's answer and the write of its id left an intent.
        Look its batch up by label where the provider can (OpenAI metadata, Gemini display name) and adopt
        it; otherwise forget its items (they are asked for again) and name the label in the log."""
        async with self._recovery_lock:
            if self._recovered:
                return
            intents, self._stale_intents = self._stale_intents, []
            self.ledger.intents = [i for i in self.ledger.intents if i not in intents]
            for intent in intents:
                client = self.clients.get(intent.model)
                found: str | None = None
                if client is not None:
                    try:
                        found = await client.find(intent.label, since=intent.at, count=len(intent.items),
                                                  exclude=frozenset(self.ledger.batches))
                    except ProviderError as exc:
                        log.warning("%s: looking up batch %s failed: %s", intent.model, intent.label, exc)
                items = [cid for cid in intent.items if cid in self.ledger.items]
                if found and found not in self.ledger.batches:
                    phases: dict[str, int] = {}
                    for cid in items:
                        it = self.ledger.items[cid]
                        it.batch = found
                        phases[it.phase] = phases.get(it.phase, 0) + 1
                    self.ledger.batches[found] = BatchRecord(
                        id=found, model=intent.model, provider=client.provider if client else "", label=intent.label,
                        wave=self.ledger.waves.get(intent.model, 0), submitted_at=intent.at, items=items,
                        total=len(items), phases=phases)
                    log.info("%s: batch %s (%s) found and adopted", intent.model, found, intent.label)
                    continue
                log.warning("batch %s (model %s) may have been submitted without its id being saved; its %d "
                            "items are submitted again", intent.label, intent.model, len(items))
                for cid in items:
                    if self.ledger.items[cid].batch is None:
                        self.ledger.drop_item(cid)
            self.ledger.save()
            self._recovered = True

    # -- polling ---------------------------------------------------------------------------------------
    def _ensure_poller(self, batch_id: str) -> None:
        _ensure_task(self._pollers, batch_id, lambda: self._poll_batch(batch_id), f"batch {batch_id}: polling",
                     lambda exc: self._fail_batch(batch_id, exc))

    def _fail_batch(self, batch_id: str, exc: Exception) -> None:
        """Its items fail (and are retried)."""
        rec = self.ledger.batches.get(batch_id)
        if rec is not None:
            self._fail_items(rec, ProviderError("server", f"batch {batch_id}: {type(exc).__name__}: {exc}"))

    async def _poll_batch(self, batch_id: str) -> None:
        rec = self.ledger.batches[batch_id]
        client = self.clients.get(rec.model)
        if client is None:
            self._fail_items(rec, ProviderError("config", f"batch {batch_id}: model {rec.model} is not in this run"))
            return
        delay = self.settings.poll_first_s
        if not rec.results_read:
            state_status = rec.status
            while state_status not in ("done", "failed", "expired", "cancelled"):
                await asyncio.sleep(delay)
                delay = min(self.settings.poll_max_s, delay * 1.5)
                try:
                    state = await client.poll(batch_id)
                except ProviderError as exc:
                    if exc.retryable:
                        log.warning("%s: polling batch %s failed (%s); polling on", rec.model, batch_id, exc)
                        continue
                    kind = "server" if exc.status == 404 else exc.kind  # a vanished batch: retry its items
                    self._fail_items(rec, ProviderError(kind, f"batch {batch_id}: {exc.message}", status=exc.status))
                    return
                changed = (state.status, state.completed, state.failed) != (rec.status, rec.completed, rec.failed)
                rec.status, rec.completed, rec.failed = state.status, state.completed, state.failed
                rec.total = state.total or rec.total
                state_status = state.status
                if state.ended:
                    rec.ended_at = time.time()
                if changed:
                    self.ledger.save()
                    self.on_change()
        await self._read_results(rec, client)

    async def _read_results(self, rec: BatchRecord, client: BatchClient) -> None:
        results = self._results.get(rec.id)
        for attempt in range(1, 6):
            if results is not None:
                break
            try:
                results = await client.results(rec.id)
                self._results[rec.id] = results  # items claimed later in this run are served from here
                break
            except ProviderError as exc:
                if not exc.retryable or attempt == 5:
                    kind = "server" if exc.status == 404 else exc.kind
                    self._fail_items(rec, ProviderError(kind, f"batch {rec.id}: results: {exc.message}",
                                                        status=exc.status))
                    return
                await asyncio.sleep(min(self.settings.poll_max_s, 2.0 ** attempt))
        assert results is not None
        elapsed = max(0.0, (rec.ended_at or time.time()) - rec.submitted_at)
        failed = 0
        for cid in rec.items:
            it = self.ledger.items.get(cid)
            if it is None or it.state in ("consumed", "failed"):
                continue
            item = results.items.get(cid)
            if item is None:
                item = ProviderError("timeout", f"{rec.model}: no result for the item (batch {rec.status})")
            if isinstance(item, Completion):
                item.latency_s = elapsed  # a batch call's latency is the batch's time
                item.first_token_s = None
            else:
                failed += 1
            self._deliver(cid, item)
        rec.failed = max(rec.failed, failed)
        rec.results_read = True
        self.ledger.save()
        self.on_change()

    def _deliver(self, cid: str, item: Completion | ProviderError) -> None:
        it = self.ledger.items[cid]
        waiters = self._waiters.pop(cid, [])
        if isinstance(item, ProviderError):
            it.state, it.error, it.error_kind = "failed", str(item), item.kind
            if item.retryable and it.batch in self.ledger.batches:
                self.ledger.batches[it.batch].retried += 1
        else:
            # "done": answered for a round nobody in this run asks for (yet); a later run that asks reads it
            # again from the provider (answers are not kept in the ledger)
            it.state = "consumed" if waiters else "done"
        for fut in waiters:
            if not fut.done():
                fut.set_result(item)

    def _fail_items(self, rec: BatchRecord, error: ProviderError) -> None:
        for cid in rec.items:
            it = self.ledger.items.get(cid)
            if it is not None and it.state in ("pending", "done"):
                self._deliver(cid, error)
        rec.results_read = True
        rec.status = rec.status if rec.status in ("failed", "expired", "cancelled") else "failed"
        self.ledger.save()
        self.on_change()

    # -- for front ends --------------------------------------------------------------------------------
    def views(self) -> list[dict[str, Any]]:
        return batch_views(self.ledger.batches_json())

    async def aclose(self) -> None:
        for task in [*self._flushers.values(), *self._pollers.values()]:
            if not task.done():
                task.cancel()
        for task in [*self._flushers.values(), *self._pollers.values()]:
            try:
                await task
            except BaseException:  # noqa: BLE001 - stopping
                pass
        self.ledger.save()
        for c in self.clients.values():
            try:
                await c.aclose()
            except Exception:  # noqa: BLE001
                pass


def batch_views(ledger_json: dict[str, Any] | None) -> list[dict[str, Any]]:
    """One row per batch — model, wave, phases, state, items done/failed — from the ledger's data (a file a
    front end reads, so the view survives quitting and reopening)."""
    if not ledger_json:
        return []
    rows = []
    for b in ledger_json.get("batches", []):
        state = b.get("status", "submitted")
        if b.get("results_read") and state == "done":
            state = "done"
        rows.append({
            "id": b.get("id", ""),
            "model": b.get("model", ""),
            "wave": b.get("wave", 0),
            "phases": ", ".join(sorted(b.get("phases", {}))),
            "state": state,
            "total": b.get("total", 0) or len(b.get("items", ())),
            "completed": b.get("completed", 0),
            "failed": b.get("failed", 0),
            "retried": b.get("retried", 0),
            "submitted_at": b.get("submitted_at"),
            "ended_at": b.get("ended_at"),
        })
    return rows


class BatchingClient(WrappingClient):
    """A model whose calls go through its provider's batch API; the same interface as a streaming client,
    so rounds from batches are the same records as streamed ones."""

    batched = True

    def __init__(self, coordinator: BatchCoordinator, name: str, stream_client: ModelClient) -> None:
        super().__init__(stream_client, name=name)
        self.coordinator = coordinator

    async def stream(
        self, prompt: str, system_prompt: str, **options: Unpack[CallOptions]
    ) -> AsyncIterator[StreamItem]:
        completion = await self.coordinator.complete(self.name, prompt, system_prompt,
                                                     json_schema=options.get("json_schema"),
                                                     max_tokens=options.get("max_tokens"))
        yield Delta(completion.text)
        yield completion
