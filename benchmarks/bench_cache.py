"""Cache (7): the share of prompt tokens served from the providers' prompt caches, per provider, for the
phases that follow a presentation (response, rebuttal, consistency test) and for the judge.

llmock does not simulate prompt caching, so the share is *computed* (as in bench_cost) from the real prompts
of a scripted tournament and each provider's published caching rule: OpenAI and Gemini cache any prefix a
model has seen before (above their minimum), Anthropic caches up to ebtui's `cache_control` breakpoints —
the system prompt and the end of the prompt's stable prefix (dilemma + rubric, at PROMPT_CACHE_BREAK).
The goal of issue 18: at least half of those tokens from cache where the provider caches.

Run alone: `python -m benchmarks.bench_cache [--quick]`. (To include it in `benchmarks/run.py`, add
`elif name == "cache": from benchmarks.bench_cache import bench_cache as f` to `_bench` and "cache" to
NAMES.)
"""

from __future__ import annotations

import sys
from collections import defaultdict

from benchmarks.bench_cost import RULES, CacheRule, Call, cached_tokens, tokens, tournament_calls
from benchmarks.common import BenchResult, Figure
from ebtui.core.records import PhaseType
from ebtui.providers.base import split_cacheable

LATER = {PhaseType.RESPONSE, PhaseType.REBUTTAL, PhaseType.CONSISTENCY_TEST}


def breakpoint_cached(rule: CacheRule, calls: list[Call]) -> list[tuple[int, int, int]]:
    """Anthropic with ebtui's two breakpoints: the system prompt, and system + the prompt's stable prefix."""
    out: list[tuple[int, int, int]] = []
    written: dict[str, set[str]] = defaultdict(set)
    for c in calls:
        total = tokens(c.system + "\n" + c.prompt)
        best_read = best_write = 0
        for prefix in (c.system, c.system + "\n" + split_cacheable(c.prompt)[0]):
            n = tokens(prefix)
            if n < rule.min_tokens:
                continue
            if prefix in written[c.model]:
                best_read = max(best_read, n)
            else:
                written[c.model].add(prefix)
                best_write = max(best_write, n - best_read)
        out.append((total, best_read, best_write if best_read == 0 else 0))
    return out


def shares(calls: list[Call], per_call: list[tuple[int, int, int]]) -> dict[str, float]:
    acc: dict[str, list[int]] = {"later phases": [0, 0], "judge": [0, 0], "all": [0, 0]}
    for c, (total, read, _w) in zip(calls, per_call, strict=True):
        group = "judge" if c.phase == PhaseType.JUDGMENT else "later phases" if c.phase in LATER else None
        for g in (group, "all"):
            if g:
                acc[g][0] += read
                acc[g][1] += total
    return {g: (r / t if t else 0.0) for g, (r, t) in acc.items()}


def bench_cache(quick: bool = False) -> BenchResult:
    res = BenchResult("cache", "7. Prompt caching: share of prompt tokens served from cache, per provider")
    calls, n_rounds = tournament_calls(quick)
    rules = list(RULES) + [
        CacheRule("anthropic", "claude-sonnet-4-5", "breakpoint", 1024, 1, 0.10, 1.25, "1,024-token minimum"),
        CacheRule("google", "gemini-2.5-flash (1,024 min)", "prefix", 1024, 1, 0.10, 1.0,
                  "implicit caching with a 1,024-token minimum (older 2.5 Flash documentation)"),
    ]
    lines = []
    for rule in rules:
        per_call = breakpoint_cached(rule, calls) if rule.kind == "breakpoint" else cached_tokens(rule, calls)
        s = shares(calls, per_call)
        met = s["later phases"] >= 0.5 and s["judge"] >= 0.5
        res.figures.append(Figure(f"{rule.provider} ({rule.model}): cached share of response/rebuttal/"
                                  f"consistency prompt tokens", 100 * s["later phases"], "%", "≥ 50%",
                                  s["later phases"] >= 0.5))
        res.figures.append(Figure(f"{rule.provider} ({rule.model}): cached share of judge prompt tokens",
                                  100 * s["judge"], "%", "≥ 50%", s["judge"] >= 0.5))
        lines.append(f"- {rule.provider} ({rule.model}, minimum {rule.min_tokens} tokens): later phases "
                     f"{s['later phases']:.0%}, judge {s['judge']:.0%}, all calls {s['all']:.0%}"
                     f"{'' if met else ' — below the 50% goal'}.")
    prefix_tokens = sorted({tokens(c.system + "\n" + split_cacheable(c.prompt)[0]) for c in calls})
    lines.append(f"- the stable prefix (system prompt + dilemma + rubric) is {prefix_tokens[0]}-"
                 f"{prefix_tokens[-1]} tokens: above the 1,024-token minimum of OpenAI and Sonnet 4.5, below "
                 "the 2,048 of Sonnet 4.6 and Gemini 2.5, where only longer shared prefixes (a model's own "
                 "repeated presentation prompt) are cached.")
    res.details = lines
    res.method = (f"A {n_rounds}-round scripted tournament (3 models, rotating judges, "
                  f"{'1 dilemma' if quick else '8 dilemmas'}); every call's system prompt and prompt read back "
                  "from the saved rounds in start order; per call, the tokens (characters ÷ 4) a provider's rule "
                  "serves from a cache written by an earlier call to the same model, assuming every call falls "
                  "within the cache lifetime (a best case). Shares are cached tokens ÷ all prompt tokens of "
                  "the group.")
    return res


if __name__ == "__main__":
    r = bench_cache("--quick" in sys.argv)
    for f in r.figures:
        print(f"{f.name}: {f.value_text()} (target {f.target}: {'met' if f.passed else 'not met'})")
    print("\n".join(r.details))
