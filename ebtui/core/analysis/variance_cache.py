"""The variance components a report estimated, kept beside the store's analysis columns
(`columns/variance_components.json`): the newest CACHE_ENTRIES estimates, each under a hash of its rows,
replicates, seed and the estimator's code, so a report whose rows did not change reads the same floats back
instead of refitting (the Henderson fits are dense: about 0.4 s of CPU per 4,000 team scores). The judge-bias
section is kept the same way (bias_source.cached_section)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ebtui.core.analysis import variance
from ebtui.core.analysis.ahead import taken
from ebtui.core.analysis.common import keep_newest, read_entries
from ebtui.core.analysis.variance import (
    DEFAULT_VC_REPLICATES,
    DEFAULT_VC_SEED,
    Component,
    Row,
    VarianceComponents,
    estimate_components,
)

#: the file in the analysis columns' folder, and how many estimates it keeps (a report makes two: its
#: components table and the judges-as-a-sample variances; the effective view a third)
CACHE_FILE = "variance_components.json"
CACHE_ENTRIES = 8


def estimate_components_cached(rows: Sequence[Row], *, replicates: int = DEFAULT_VC_REPLICATES,
                               seed: int = DEFAULT_VC_SEED, cache: Path | None = None) -> VarianceComponents:
    """`variance.estimate_components`, read from `cache`/CACHE_FILE when the same rows, replicates, seed and
    code were estimated there before (else estimated and kept). cache None, or not writable: estimated every
    time."""
    if cache is None:
        return estimate_components(rows, replicates=replicates, seed=seed)
    key = cache_key(rows, replicates, seed)
    path = cache / CACHE_FILE
    held = read_entries(path)
    for k, value in held:
        if k == key:
            try:
                return _from_json(value)
            except (KeyError, TypeError, ValueError, IndexError):
                break
    found, ahead = taken(CACHE_FILE, key)  # (computed ahead by a fork of a cold report: analysis.ahead)
    vc: VarianceComponents = ahead if found else estimate_components(rows, replicates=replicates, seed=seed)
    keep_newest(path, held, key, _to_json(vc), CACHE_ENTRIES)
    return vc


def cache_key(rows: Sequence[Row], replicates: int, seed: int = DEFAULT_VC_SEED) -> str:
    """The key an estimate of these rows is kept under: a hash of the rows, replicates, seed and the code."""
    import hashlib

    h = hashlib.sha256()
    for module in (variance.__file__, __file__):
        with open(module, "rb") as fh:
            h.update(fh.read())
    h.update(f"{replicates}|{seed}|{len(rows)}\x1e".encode())
    h.update("\x1e".join(f"{r.dilemma}\x1f{r.model}\x1f{r.judge}\x1f{r.exchange}\x1f{r.seat}\x1f{int(r.same_family)}"
                         f"\x1f{r.score!r}" for r in rows).encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def _to_json(vc: VarianceComponents) -> dict[str, object]:
    """Everything a VarianceComponents holds (floats as JSON writes them: read back to the same bits)."""
    return {"components": [[c.name, c.variance, c.low, c.high, c.note, c.raw, c.df] for c in vc.components.values()],
            "source": vc.source, "n_rows": vc.n_rows, "dilemmas": vc.dilemmas, "notes": list(vc.notes),
            "replicates": vc.replicates, "seed": vc.seed}


def _from_json(d: Any) -> VarianceComponents:
    comps = {str(c[0]): Component(str(c[0]), c[1], c[2], c[3], str(c[4]), c[5], c[6]) for c in d["components"]}
    return VarianceComponents(comps, str(d["source"]), int(d["n_rows"]), int(d["dilemmas"]),
                              [str(n) for n in d["notes"]], int(d["replicates"]), int(d["seed"]))
