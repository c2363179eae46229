"""Bad input: broken documents, fuzzed models.toml / tournament.toml (hypothesis) and fuzzed judge replies.

Every problem is one clear line naming the file and what is wrong in it (the CLI: exit code 2, no
traceback), parse_judgment never raises nor invents a score, and a failed command loses nothing saved.
"""

from __future__ import annotations

import io
import json
import random
import string
import tempfile
import time
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import docx
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ebtui.cli import cli
from ebtui.config import PROVIDERS, ConfigError, ModelsConfig, load_models_file
from ebtui.core.dilemmas import DocumentError, load_dilemmas
from ebtui.core.judgment import parse_judgment
from ebtui.core.records import CRITERIA, Judgment
from ebtui.core.round import RoundSpec, run_round
from ebtui.core.tournament.config import TournamentConfig, TournamentConfigError, load_tournament_config
from ebtui.providers.scripted import ScriptedClient
from tests.support.factories import open_store
from tests.support.reliability_helpers import run_ebtui, scripted_models_toml, toml_table

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FUZZ_LONG = settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------------------------- documents
def good_docx_bytes(n: int = 2) -> bytes:
    doc = docx.Document()
    for i in range(1, n + 1):
        add_dilemma(doc, i)
    buf = io.BytesIO()
    doc.save(buf)
    return buf.getvalue()


def add_dilemma(doc: Any, i: int, *, sections: bool = True) -> None:
    doc.add_heading(f"Dilemma {i}: The Lantern Keeper Number {i}", level=2)
    doc.add_paragraph(f"Category: Stewardship {i}")
    doc.add_paragraph(f"A keeper {i} must decide whether the lantern burns tonight, and who pays for its oil.")
    if sections:
        doc.add_paragraph("Complications:")
        doc.add_paragraph(f"The oil is borrowed ({i}).", style="List Number")
        doc.add_paragraph("Questions:")
        doc.add_paragraph("Who owns the light?", style="List Number")
        doc.add_paragraph("Asymmetric Features:")
        doc.add_paragraph("Only the keeper has the key.", style="List Number")
        doc.add_paragraph(f"Consistency Case: A neighbour keeps a spare key ({i}).")


def zip_without_document() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("hello.txt", "not a word document")
    return buf.getvalue()


def corrupted(data: bytes, seed: int) -> bytes:
    rng = random.Random(seed)
    b = bytearray(data)
    for _ in range(40):
        i = rng.randrange(len(b) // 4, len(b))
        b[i] = rng.randrange(256)
    return bytes(b)


def no_dilemmas_docx() -> bytes:
    doc = docx.Document()
    doc.add_paragraph("Meeting notes. Nothing to see here.")
    buf = io.BytesIO()
    doc.save(buf)
    return buf.getvalue()


def bad_documents() -> dict[str, bytes]:
    good = good_docx_bytes()
    rng = random.Random(3)
    return {
        "empty.docx": b"",
        "random.docx": bytes(rng.randrange(256) for _ in range(5000)),
        "text.docx": b"Dilemma 1: plain text is not a docx\n",
        "not-word.docx": zip_without_document(),
        "half.docx": good[: len(good) // 2],
        "head.docx": good[:100],
        "tail-cut.docx": good[:-30],
        "flipped.docx": corrupted(good, 1),
        "no-dilemmas.docx": no_dilemmas_docx(),
    }


def assert_one_clear_line(message: str, path: Path) -> None:
    assert "\n" not in message.strip(), message
    assert str(path) in message, message
    assert "Traceback" not in message
    assert len(message) < 400, message


@pytest.mark.parametrize("name", list(bad_documents()))
def test_broken_document_is_a_document_error_naming_the_file(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(bad_documents()[name])
    with pytest.raises(DocumentError) as info:
        load_dilemmas(path)
    assert_one_clear_line(str(info.value), path)
    assert info.value.problem  # says what is wrong, not only where


@pytest.mark.parametrize("cut", [0.1, 0.3, 0.5, 0.7, 0.9, 0.99])
def test_truncated_docx_bytes_never_crash(tmp_path: Path, cut: float) -> None:
    data = good_docx_bytes(3)
    path = tmp_path / "cut.docx"
    path.write_bytes(data[: int(len(data) * cut)])
    with pytest.raises(DocumentError) as info:
        load_dilemmas(path)
    assert_one_clear_line(str(info.value), path)


def test_missing_sections_warn_naming_dilemma_and_section(tmp_path: Path) -> None:
    doc = docx.Document()
    add_dilemma(doc, 1, sections=False)
    add_dilemma(doc, 2)
    path = tmp_path / "sparse.docx"
    doc.save(path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dilemmas = load_dilemmas(path)
    assert len(dilemmas) == 2
    sparse = dilemmas[0]
    assert sparse.questions == [] and sparse.consistency_case == ""  # missing, not borrowed from neighbours
    assert dilemmas[1].questions == ["Who owns the light?"]
    msgs = [str(w.message) for w in caught]
    for section in ("Questions", "Consistency Case"):
        assert any(sparse.id in m and section in m and str(path) in m for m in msgs), msgs


def large_document(tmp_path: Path, n: int) -> Path:
    doc = docx.Document()
    for i in range(1, n + 1):
        add_dilemma(doc, i)
    path = tmp_path / f"large-{n}.docx"
    doc.save(path)
    return path


def check_large_document(tmp_path: Path, n: int, limit_s: float) -> None:
    path = large_document(tmp_path, n)
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a complete document loads without a single warning
        dilemmas = load_dilemmas(path)
    elapsed = time.perf_counter() - started
    assert len(dilemmas) == n
    assert len({d.id for d in dilemmas}) == n
    assert dilemmas[-1].consistency_case == f"A neighbour keeps a spare key ({n})."
    assert elapsed < limit_s, f"{n} dilemmas took {elapsed:.1f}s"
    res = CliRunner().invoke(cli, ["dilemmas", "--document", str(path), "--json"])
    assert res.exit_code == 0
    assert len(json.loads(res.stdout)) == n


def test_large_document_loads(tmp_path: Path) -> None:
    check_large_document(tmp_path, 150, limit_s=20)


@pytest.mark.slow
def test_very_large_document_loads(tmp_path: Path) -> None:
    check_large_document(tmp_path, 500, limit_s=60)


# --------------------------------------------------------------------------------------------- a store to keep safe
def saved_store(tmp_path: Path) -> Path:
    """A store holding one saved round (played by the scripted model)."""
    import asyncio

    root = tmp_path / "store"
    rs = open_store(root)
    d = load_dilemmas()[0]
    clients = {n: ScriptedClient(n) for n in ("alpha", "beta", "judge")}

    async def play() -> None:
        async for _ in run_round(RoundSpec(dilemma=d, team_a="alpha", team_b="beta", judge="judge"), clients, rs):
            pass

    asyncio.run(play())
    rs.close()
    return root


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_cli_with_bad_files_says_one_line_exit_2_and_loses_nothing(tmp_path: Path) -> None:
    store = saved_store(tmp_path)
    before = snapshot(store)
    assert any(k.startswith("rounds/") for k in before)
    docs = bad_documents()
    bad_doc = tmp_path / "flipped.docx"
    bad_doc.write_bytes(docs["flipped.docx"])
    empty_doc = tmp_path / "empty.docx"
    empty_doc.write_bytes(b"")
    good_models = tmp_path / "models.toml"
    good_models.write_text(scripted_models_toml(["alpha", "beta", "judge"]))
    bad_models = tmp_path / "bad-models.toml"
    bad_models.write_text('[models.gpt]\nprovider = "openai"\nmodel = "gpt-4o"\nmax_tokens = -5\n')
    unknown_provider = tmp_path / "unknown-provider.toml"
    unknown_provider.write_text('[models.x]\nprovider = "skynet"\n')
    not_toml = tmp_path / "not-toml.toml"
    not_toml.write_text("[models.x\nprovider = \n")
    bad_tournament = tmp_path / "bad-t.toml"
    bad_tournament.write_text(toml_table({"models": ["alpha", "beta"], "concurrency": 0}))
    doc_tournament = tmp_path / "doc-t.toml"
    doc_tournament.write_text(toml_table({"models": ["alpha", "beta"], "document": str(bad_doc)}))
    unknown_model_t = tmp_path / "unknown-model-t.toml"
    unknown_model_t.write_text(toml_table({"models": ["alpha", "nobody"]}))
    d0 = load_dilemmas()[0].id
    run_args = ["run", "--dilemma", d0, "--team-a", "alpha", "--team-b", "beta", "--judge", "judge"]
    cases: list[tuple[list[str], Path, str]] = [
        (["dilemmas", "--document", str(bad_doc)], bad_doc, "corrupt"),
        (["dilemmas", "--document", str(empty_doc)], empty_doc, "empty"),
        ([*run_args, "--document", str(empty_doc), "--models", str(good_models)], empty_doc, "empty"),
        (["models", "list", "--models", str(bad_models)], bad_models, "max_tokens"),
        (["models", "list", "--models", str(unknown_provider)], unknown_provider, "provider"),
        (["models", "check", "--models", str(not_toml)], not_toml, "TOML"),
        ([*run_args, "--models", str(bad_models)], bad_models, "max_tokens"),
        (["tournament", str(bad_tournament), "--models", str(good_models)], bad_tournament, "concurrency"),
        (["tournament", str(doc_tournament), "--models", str(good_models)], bad_doc, "corrupt"),
        (["tournament", str(unknown_model_t), "--models", str(good_models)], unknown_model_t, "nobody"),
        (["tournament", str(tmp_path / "missing.toml")], tmp_path / "missing.toml", "no such file"),
        (["rounds", "show", "r-doesnotexist"], store, "not found"),
        (["rounds", "override", "r-doesnotexist", "--team", "a", "--criterion", "consistency", "--value", "7",
          "--note", "x"], store, "not found"),
    ]
    # in-process for most (fast) ...
    for args, named, word in cases:
        res = CliRunner().invoke(cli, ["--store", str(store), *args])
        assert res.exit_code == 2, (args, res.output, res.exception)
        err = res.stderr.strip()
        assert err.startswith("ebtui: error:"), (args, err)
        assert_one_clear_line(err, named)
        assert word.lower() in err.lower(), (args, err)
        assert not isinstance(res.exception, Exception) or isinstance(res.exception, SystemExit), args
    # ... and as real processes for a few, where a traceback would show
    for args, named, word in (cases[0], cases[3], cases[8]):
        proc = run_ebtui("--store", str(store), *args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert "Traceback" not in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert str(named) in proc.stderr and word.lower() in proc.stderr.lower()
    # nothing saved was lost or touched (the store may add derived files of its own, e.g. an index check)
    after = snapshot(store)
    for name, (data, mtime) in before.items():
        assert name in after, f"{name} lost"
        assert after[name][0] == data, f"{name} changed"
        if name.startswith(("rounds/", "tournaments/")):
            assert after[name][1] == mtime, f"{name} rewritten"
    assert {n for n in after if n.startswith(("rounds/", "tournaments/"))} == \
        {n for n in before if n.startswith(("rounds/", "tournaments/"))}


# --------------------------------------------------------------------------------------------- config fuzzing
def toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float, str)):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(k, ensure_ascii=False)} = {toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(v)


def to_toml(data: dict[str, Any]) -> str:
    """TOML text for a generated document: scalars at the top, then one [a."b"] table per nested dict."""
    lines = [f"{json.dumps(k, ensure_ascii=False)} = {toml_value(v)}" for k, v in data.items()
             if not isinstance(v, dict)]
    for k, v in data.items():
        if isinstance(v, dict):
            for name, table in v.items():
                if isinstance(table, dict):
                    lines.append(f"[{json.dumps(k)}.{json.dumps(name, ensure_ascii=False)}]")
                    lines += [f"{json.dumps(kk, ensure_ascii=False)} = {toml_value(vv)}" for kk, vv in table.items()]
                else:
                    lines.append(f"{json.dumps(k)}.{json.dumps(name, ensure_ascii=False)} = {toml_value(table)}")
    return "\n".join(lines) + "\n"


names = st.text(alphabet=string.ascii_letters + string.digits + "-_ é", min_size=1, max_size=12)
scalars = st.one_of(
    st.booleans(),
    st.integers(min_value=-10, max_value=5000),
    st.floats(min_value=-5, max_value=500, allow_nan=False),
    st.text(max_size=20),
    st.sampled_from(list(PROVIDERS) + ["skynet", "", "OpenAI", "valid", "rotate", "panel", "all"]),
)
values = st.one_of(scalars, st.lists(scalars, max_size=4), st.dictionaries(names, scalars, max_size=3),
                   st.lists(st.dictionaries(st.sampled_from(["match", "reply", "kind", "times"]), scalars,
                                            max_size=3), max_size=2))
MODEL_FIELDS = ["provider", "model", "api_key_env", "base_url", "max_tokens", "temperature", "price_in",
                "price_out", "max_concurrency", "timeout_s", "stall_timeout_s", "attempts", "backoff_s",
                "latency_s", "judge_mode", "rules", "faults", "json_schema", "cache_system", "seed", "name",
                "extras", "source", "bogus"]
model_tables = st.dictionaries(st.one_of(st.sampled_from(MODEL_FIELDS), names), values, max_size=6)
models_docs = st.fixed_dictionaries(
    {"models": st.dictionaries(names, st.one_of(model_tables, scalars), max_size=4)},
    optional={"default": st.one_of(names, scalars), "bogus": scalars},
)

TOURNAMENT_FIELDS = ["name", "models", "dilemmas", "document", "self_debates", "rounds_per_pairing", "judges",
                     "blind_judge", "concurrency", "budget_usd", "seed", "store", "max_tokens",
                     "expected_output_tokens", "bogus"]
tournament_docs = st.dictionaries(
    st.sampled_from(TOURNAMENT_FIELDS),
    st.one_of(values, st.lists(st.sampled_from(["alpha", "beta", "gamma", "alpha", ""]), max_size=4)),
    max_size=8,
).map(lambda d: {**d, "limits": {"providers": {"openai": 0}}} if d.get("bogus") == 0 else d)

_TMP = Path(tempfile.mkdtemp(prefix="ebtui-fuzz-"))


def _load_or_refuse(name: str, text: str | bytes, load: Callable[[Path], Any], error: type[Exception],
                    words: tuple[str, ...]) -> Any:
    """Write `text` as the file `name` and load it: the config, or None when it was refused with one clear
    line that starts with the file's path and names one of `words`."""
    path = _TMP / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    try:
        return load(path)
    except error as exc:
        msg = str(exc)
        assert_one_clear_line(msg, path)
        assert msg.startswith(str(path)), msg
        assert any(w in msg for w in words), msg
        return None


def check_models_text(text: str | bytes) -> None:
    cfg = _load_or_refuse("models.toml", text, load_models_file, ConfigError,
                          ("field ", "TOML", "UTF-8", "no model named", "model '"))
    if cfg is None:
        return
    assert isinstance(cfg, ModelsConfig)
    assert {"local", "scripted"} <= set(cfg.models)
    for name, m in cfg.models.items():
        assert m.name == name and m.provider in PROVIDERS


def check_tournament_text(text: str | bytes) -> None:
    cfg = _load_or_refuse("tournament.toml", text, load_tournament_config, TournamentConfigError,
                          ("field ", "TOML", "cannot read"))
    if cfg is None:
        return
    assert isinstance(cfg, TournamentConfig)
    assert cfg.models and len(set(cfg.models)) == len(cfg.models)


def _models_structured(doc: dict[str, Any]) -> None:
    check_models_text(to_toml(doc))


def _models_raw(text: str) -> None:
    check_models_text(text)


def _models_bytes(data: bytes) -> None:
    check_models_text(data)


def _tournament_structured(doc: dict[str, Any]) -> None:
    check_tournament_text(to_toml(doc))


def _tournament_raw(text: str) -> None:
    check_tournament_text(text)


test_models_toml_fuzz = FUZZ(given(models_docs)(_models_structured))
test_models_toml_random_text = FUZZ(given(st.text(max_size=200))(_models_raw))
test_models_toml_random_bytes = FUZZ(given(st.binary(max_size=200))(_models_bytes))
test_tournament_toml_fuzz = FUZZ(given(tournament_docs)(_tournament_structured))
test_tournament_toml_random_text = FUZZ(given(st.text(max_size=200))(_tournament_raw))
test_models_toml_fuzz_long = pytest.mark.slow(FUZZ_LONG(given(models_docs)(_models_structured)))
test_tournament_toml_fuzz_long = pytest.mark.slow(FUZZ_LONG(given(tournament_docs)(_tournament_structured)))


@pytest.mark.parametrize("text, words", [
    ('[models.gpt]\nprovider = "openai"\n', ["'gpt'", "model"]),
    ('[models.gpt]\nprovider = "skynet"\nmodel = "x"\n', ["'gpt'", "provider", "skynet"]),
    ('[models.gpt]\nprovider = "openai"\nmodel = "x"\ntemperature = 9\n', ["'gpt'", "temperature"]),
    ('[models.c]\nprovider = "anthropic"\nmodel = "x"\ntemperature = 0.5\n', ["'c'", "temperature"]),
    ('[models.s]\nprovider = "scripted"\njudge_mode = "sometimes"\n', ["'s'", "judge_mode"]),
    ('[models.s]\nprovider = "openai"\nmodel = "x"\nwat = 1\n', ["'s'", "wat"]),
])
def test_models_toml_messages_name_model_and_field(text: str, words: list[str]) -> None:
    path = _TMP / "named.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_models_file(path)
    msg = str(info.value)
    assert_one_clear_line(msg, path)
    for w in words:
        assert w in msg, msg


# --------------------------------------------------------------------------------------------- judge replies
score_values = st.one_of(st.integers(min_value=1, max_value=10), st.integers(min_value=-5, max_value=30),
                         st.text(max_size=6), st.none(), st.floats(allow_nan=True), st.booleans())
judge_dicts = st.fixed_dictionaries({
    "team_a": st.fixed_dictionaries({"scores": st.dictionaries(st.sampled_from(CRITERIA), score_values),
                                     "justification": st.text(max_size=40)}),
    "team_b": st.fixed_dictionaries({"scores": st.dictionaries(st.sampled_from(CRITERIA), score_values),
                                     "justification": st.text(max_size=40)}),
    "overall_analysis": st.text(max_size=40),
})


def check_judgment(j: Judgment) -> None:
    assert isinstance(j, Judgment)
    for team in ("a", "b"):
        for c, v in j.parsed_scores(team).as_dict().items():  # type: ignore[arg-type]
            assert v is None or (isinstance(v, int) and 1 <= v <= 10), (c, v)
        if j.parsed_scores(team).missing():  # type: ignore[arg-type]
            assert j.needs_review


def _judge_text(text: str) -> None:
    j = parse_judgment(text, team_a_id="alpha", team_b_id="beta")
    check_judgment(j)
    if not any(ch.isdigit() for ch in text):  # no number in the reply: no score can come out of it
        assert all(v is None for t in ("a", "b") for v in j.parsed_scores(t).as_dict().values())  # type: ignore[arg-type]
        assert j.needs_review


def _judge_json(doc: dict[str, Any]) -> None:
    text = json.dumps(doc, allow_nan=True)
    j = parse_judgment(text, team_a_id="alpha", team_b_id="beta")
    check_judgment(j)
    for team, key in (("a", "team_a"), ("b", "team_b")):
        given_scores = doc[key]["scores"]
        got = j.parsed_scores(team).as_dict()  # type: ignore[arg-type]
        for c in CRITERIA:
            v = given_scores.get(c)
            if isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 10:
                assert got[c] == v, (team, c, v, got[c])  # a clear score is read as given
            elif v is None or isinstance(v, bool) or (isinstance(v, int) and not 1 <= v <= 10):
                assert got[c] is None, (team, c, v, got[c])  # missing or out of range: never invented
    if any(v is None for s in (j.team_a_scores, j.team_b_scores) for v in s.as_dict().values()):
        assert j.needs_review


def _judge_cut(doc: dict[str, Any], cut: float) -> None:
    text = json.dumps(doc)
    _judge_text(text[: int(len(text) * cut)])


test_parse_judgment_any_text = FUZZ(given(st.text(max_size=400))(_judge_text))
test_parse_judgment_json = FUZZ(given(judge_dicts)(_judge_json))
test_parse_judgment_cut_json = FUZZ(given(judge_dicts, st.floats(0, 1))(_judge_cut))
test_parse_judgment_any_text_long = pytest.mark.slow(FUZZ_LONG(given(st.text(max_size=2000))(_judge_text)))
test_parse_judgment_json_long = pytest.mark.slow(FUZZ_LONG(given(judge_dicts)(_judge_json)))
