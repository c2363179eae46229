"""The dataset card written beside the tidy tables: README.md opening with the YAML metadata block the Hugging
Face hub reads (configs naming each table's files, features with their types), then what the data is, how
it was made and every column described. The licence is left to the user (`license: unknown` until they
choose one)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from ebtui import __version__
from ebtui.core.export import tidy
from ebtui.core.export.tidy import TidyTable
from ebtui.core.facts import exchange_key
from ebtui.core.records import CRITERIA, Round, Tournament

#: tidy column type -> Hugging Face datasets dtype
HF_DTYPES = {"str": "string", "int": "int64", "float": "float64", "bool": "bool", "datetime": "timestamp[us, tz=UTC]"}


def _q(value: str) -> str:
    """A YAML scalar that reads back as exactly this string (JSON strings are YAML double-quoted scalars)."""
    return json.dumps(value, ensure_ascii=True)


def _size_category(n: int) -> str:
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
                        (1_000_000, "100K<n<1M")):
        if n < limit:
            return name
    return "1M<n<10M"


def metadata_block(tables: dict[str, TidyTable], *, title: str, formats: Sequence[str]) -> str:
    """The YAML front matter (between the two `---` lines)."""
    ext = "parquet" if "parquet" in formats else "csv"
    lines = [
        "license: unknown  # choose the licence before you share the data (e.g. cc-by-4.0)",
        f"pretty_name: {_q(title)}",
        "language:",
        "- en",
        "tags:",
        "- ethics",
        "- llm-evaluation",
        "- llm-as-a-judge",
        "- ebtui",
        "size_categories:",
        f"- {_size_category(len(tables['scores'].rows))}",
        "configs:",
    ]
    for i, name in enumerate(tables):
        lines += [f"- config_name: {name}", f"  data_files: {_q(f'{name}.{ext}')}"]
        if i == 0:
            lines.append("  default: true")
    lines.append("dataset_info:")
    for name, table in tables.items():
        lines += [f"- config_name: {name}", "  features:"]
        for c in table.columns:
            lines += [f"  - name: {c.name}", f"    dtype: {_q(HF_DTYPES[c.type])}"]
        lines += ["  splits:", "  - name: train", f"    num_examples: {len(table.rows)}"]
    return "\n".join(lines)


def _md(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ").replace("<", "&lt;").replace(">", "&gt;")


def dataset_card(tables: dict[str, TidyTable], rounds: Sequence[Round], *, title: str,
                 tournaments: Sequence[Tournament] = (), formats: Sequence[str] = ("csv",)) -> str:
    """The whole README.md."""
    models = sorted({m for r in rounds for m in (r.team_a_model, r.team_b_model)})
    judges = sorted({r.judge_model for r in rounds})
    statuses = Counter(str(r.status) for r in rounds)
    scores = tables["scores"]
    i_parsed = scores.column_names.index("parsed")
    missing = sum(1 for row in scores.rows if row[i_parsed] is None)
    i_over = scores.column_names.index("overridden")
    overridden = sum(1 for row in scores.rows if row[i_over])
    files = ", ".join(f"`{n}.{ext}`" for n in tables for ext in formats)
    out = ["---", metadata_block(tables, title=title, formats=formats), "---", "", f"# {_md(title)}", "",
           "Language models debating moral dilemmas in the format of an Ethics Bowl, scored by other language "
           "models acting as judges, exported from an [ebtui](https://pypi.org/project/ebtui/) results store "
           f"by ebtui {__version__} on {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}.", "",
           "## How the data was made", "",
           "In each round Team A (a model) presents an analysis of a dilemma, Team B (another model) responds, "
           "Team A rebuts and then answers a consistency test (a structurally similar case), and a judge (a "
           "third model) scores both teams 1-10 on seven criteria: " + ", ".join(CRITERIA) + ". "
           "The judge's reply is read by ebtui's parser; a score it could not read is missing (empty), never "
           "defaulted. Humans may override a score (the parsed value is kept beside the effective one) or "
           "accept it as parsed. A judge panel is several rounds sharing one exchange (the same phases 1-4) "
           "with different judges.", "",
           f"- Rounds: {len(rounds)} (" + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())) + ")",
           f"- Exchanges: {len({exchange_key(r) for r in rounds})}",
           f"- Dilemmas: {len({r.dilemma_id for r in rounds})}",
           f"- Models: {', '.join(_md(m) for m in models)}",
           f"- Judges: {', '.join(_md(j) for j in judges)}",
           f"- Scores: {len(scores.rows)} rows, {missing} missing (the judge gave no valid score), "
           f"{overridden} overridden by a human",
           ]
    for t in tournaments:
        out.append(f"- Tournament {_md(t.id)}: {_md(t.name)} ({_md(str(t.status))})")
    out += ["", "## Files", "", f"{files}. Load them with pandas, e.g.", "", "```python",
            "import pandas as pd",
            f"scores = pd.read_{'parquet' if 'parquet' in formats else 'csv'}"
            f"(\"scores.{'parquet' if 'parquet' in formats else 'csv'}\")",
            "```", "", "or with the Hugging Face `datasets` library (each table is a config).", "",
            "## Licence", "", "Not set: the person sharing the data chooses it (the `license` field above). The "
            "texts are model outputs; check the terms of the models' providers.", ""]
    for name, table in tables.items():
        out += [f"## Table `{name}`: {_md(table.description)}", "", "| column | type | meaning |",
                "| --- | --- | --- |"]
        out += [f"| {c.name} | {c.type} | {_md(c.description)} |" for c in table.columns]
        out.append("")
    return "\n".join(out)


def write_dataset(rounds: Sequence[Round], out_dir: Path, *, title: str, formats: Sequence[str] = ("parquet", "csv"),
                  families: Mapping[str, str] | None = None, tournaments: Sequence[Tournament] = ()) -> list[Path]:
    """Write scores/rounds/phases in each format and the dataset card README.md into out_dir; return the paths.
    Parquet needs pyarrow (MissingExtra before anything is written when it is absent)."""
    if "parquet" in formats:
        tidy.require_pyarrow()
    out_dir.mkdir(parents=True, exist_ok=True)
    tables = tidy.tidy_tables(rounds, families)
    paths: list[Path] = []
    for name, table in tables.items():
        if "parquet" in formats:
            paths.append(tidy.write_parquet(table, out_dir / f"{name}.parquet"))
        if "csv" in formats:
            paths.append(tidy.write_csv(table, out_dir / f"{name}.csv"))
    card = out_dir / "README.md"
    card.write_text(dataset_card(tables, rounds, title=title, tournaments=tournaments, formats=formats),
                    encoding="utf-8")
    paths.append(card)
    return paths


__all__ = ["dataset_card", "metadata_block", "write_dataset"]
