"""ICC(2,1) of a units x judges matrix: the agreement figure ebtui.core.analysis.columnar.judge_agreement
reports beside Krippendorff's alpha."""

from __future__ import annotations

import numpy as np


def icc_2_1(data: np.ndarray) -> float | None:
    """ICC(2,1) (Shrout & Fleiss: two-way random effects, absolute agreement, one rater) of a units x judges
    matrix with no missing cell; None when it cannot be computed (fewer than 2 units or judges, no variance)."""
    n, k = data.shape
    if n < 2 or k < 2:
        return None
    grand = data.mean()
    ms_r = k * np.sum((data.mean(axis=1) - grand) ** 2) / (n - 1)
    ms_c = n * np.sum((data.mean(axis=0) - grand) ** 2) / (k - 1)
    sse = np.sum((data - data.mean(axis=1, keepdims=True) - data.mean(axis=0, keepdims=True) + grand) ** 2)
    ms_e = sse / ((n - 1) * (k - 1))
    denom = ms_r + (k - 1) * ms_e + k * (ms_c - ms_e) / n
    if not denom > 0:
        return None
    return float((ms_r - ms_e) / denom)
