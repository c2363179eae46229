"""Write N rounds in the public Ethics Bowl runner's `all_rounds.jsonl` shape (tests/support/eb_synth.py: its
prompts, replies and recorded judgments, ~5.6 kB a round), for timing and memory of `ebtui import eb`.

    python -m benchmarks.gen_eb OUT.jsonl 100000 [--seed 1]

Then, e.g.: /usr/bin/time -v ebtui import eb OUT.jsonl --store /tmp/s  ("Maximum resident set size")."""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from ebtui.core.records import CRITERIA
from tests.support.eb_synth import DILEMMAS, make_round

MODELS = tuple(f"model-{i}" for i in range(8))


def write(out: Path, n: int, seed: int = 1) -> int:
    """N rounds (each runner id once, round-robin models, scores 3-10 at random); the bytes written."""
    rng = random.Random(seed)
    dilemmas = sorted(DILEMMAS)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as fh:
        for k in range(1, n + 1):
            a, b, judge = rng.sample(MODELS, 3)
            scores = [{c: rng.randint(3, 10) for c in CRITERIA} for _ in range(2)]
            fh.write(json.dumps(make_round(k, dilemmas[k % len(dilemmas)], a, b, judge, *scores)) + "\n")
    return out.stat().st_size


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=Path)
    p.add_argument("n", type=int)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    size = write(args.out, args.n, args.seed)
    print(f"{args.n:,} rounds, {size / 1e6:,.0f} MB: {args.out}")


if __name__ == "__main__":
    main()
