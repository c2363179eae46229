"""Tournaments through the providers' batch APIs: waves of calls, a ledger of batch ids, resume, estimates.

- `BatchCoordinator` / `BatchingClient` (coordinator.py): a batch model's calls gathered into batches.
- `BatchLedger` (ledger.py): `<store>/batches/<tournament_id>.json`, written before polling.
- `prepare_batch(...)` (setup.py): the coordinator and wrapped clients for a tournament's batch models.
- `batch_estimate(...)` (estimate.py): list price, batch price and expected prompt-cache savings.
"""

from __future__ import annotations

from ebtui.core.batch.coordinator import (
    BatchCoordinator,
    BatchingClient,
    BatchSettings,
    batch_views,
    phase_of,
    request_key,
)
from ebtui.core.batch.ledger import BatchLedger, LedgerError, ledger_path, read_ledger

__all__ = [
    "BatchCoordinator",
    "BatchLedger",
    "BatchSettings",
    "BatchingClient",
    "LedgerError",
    "batch_views",
    "ledger_path",
    "phase_of",
    "read_ledger",
    "request_key",
]
