"""Reports, for every front end (`ebtui report` and its --json and --html, `ebtui compare`, the app's Analysis
tab, the Python API): which rounds (`select`: always their analysis columns, one row per judgment; whole rounds
only where transcripts are shown or classified), each model's family resolved once, an optional classifier
model, the report's numbers (`build_report`; `report_of` does the three steps), and its files (Markdown with
charts and CSVs, or one web page) or its JSON. Never prints: notes for the user go to a callback."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ebtui.errors import UsageError

if TYPE_CHECKING:  # (`X as X`: the front ends name these types from here)
    from ebtui.config import ModelsConfig
    from ebtui.core.analysis import Analysis as Analysis
    from ebtui.core.analysis import ConsistencyClassification as ConsistencyClassification
    from ebtui.core.analysis import Table as Table
    from ebtui.core.analysis.bias_types import BiasSection
    from ebtui.core.analysis.frame import Facts as Facts
    from ebtui.core.audit.calibrate import Calibration
    from ebtui.core.records import Round, Tournament
    from ebtui.core.report import ReportData as ReportData
    from ebtui.core.usecases.context import AppContext
    from ebtui.providers.base import ModelClient

__all__ = ["TRANSCRIPTS_UP_TO", "AnalysisCache", "AnalysisCancelled", "AnalysisResult", "Selection", "analyse", "build_report", "classifier_client", "classify", "default_title",
           "api_report", "with_human_audit", "families", "families_for", "report_json", "report_json_text", "report_of", "select", "tab_rounds", "tournament_report", "write_html",
           "write_markdown"]

#: up to this many rounds the app's compare view reads them whole to show transcripts beside the numbers (above
#: it, no transcript; the tab names this in its `omitted` notes). No number depends on it: every analysis,
#: the judge-bias section included, reads the analysis columns at any size.
TRANSCRIPTS_UP_TO = 2000

Classifications = Mapping[str, "ConsistencyClassification"]


def _quiet(text: str) -> None:
    """No note (the default of `note` callbacks)."""


@contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cycle collector off while a report is computed (back on after, as it was): a report allocates
    millions of small lists and dicts (rows, JSON), the collector rescans them again and again (measured:
    a 12 MB JSON column read 0.78 s with it, 0.07 s without; the whole warm report at 100,000 rounds 17% of
    its CPU), and nothing it makes is a cycle worth collecting before it is done."""
    import gc

    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@dataclass
class Selection:
    """The rounds a report reads: their columns (`facts`: one row per judgment), the rounds whole where needed
    (None: not read), the tournament record (None: none, or lost) and the round files left out as
    unreadable."""

    root: Path
    facts: Facts
    rounds: list[Round] | None
    tournament: Tournament | None
    unreadable: list[tuple[str, str]]
    filters: dict[str, str | None] = field(default_factory=dict)

    def require_rounds(self) -> None:
        """A UsageError naming the filters when nothing is selected."""
        if len(self.facts):
            return
        what = [f"tournament {self.filters.get('tournament')!r}" if self.filters.get("tournament") else "",
                f"model {self.filters.get('model')!r}" if self.filters.get("model") else "",
                f"dilemma {self.filters.get('dilemma')!r}" if self.filters.get("dilemma") else ""]
        filt = ", ".join(w for w in what if w)
        raise UsageError(f"no rounds in {self.root}" + (f" matching {filt}" if filt else "") + "; nothing to report")


def existing_root(ctx: AppContext) -> Path:
    root = ctx.store_root
    if not root.is_dir():
        raise UsageError(f"no results store at {root} (give --store DIR)")
    return root


@gc_paused()
def select(ctx: AppContext, *, tournament_id: str | None = None, model: str | None = None,
           dilemma: str | None = None, whole_rounds: bool = False, with_classifier: bool = False,
           note: Callable[[str], None] = _quiet,
           progress: Callable[[int, int], None] | None = None) -> Selection:
    """The report's rounds: their analysis columns beside the store (ebtui.core.analysis.source), one row per
    judgment (a round's own, then those `ebtui rejudge` added) at any store size — no round file is read
    unless it changed since the last report. Whole rounds (transcripts) are read as well only where they are
    shown or classified (`whole_rounds`, `with_classifier`). `progress(done, total)` hears a first build."""
    from ebtui.core.store import StoreError

    root = existing_root(ctx)
    results = ctx.store
    tournament = None
    rounds: list[Round] | None = None
    try:
        if tournament_id:
            try:
                tournament = results.load_tournament(tournament_id)
            except StoreError:
                tournament = None  # the rounds may still be there (e.g. the tournament file was lost)
        if whole_rounds or with_classifier:
            rounds = results.load_rounds(tournament=tournament_id, dilemma=dilemma)
            if model:
                from ebtui.core.views.means import rounds_with_team_seat

                rounds = rounds_with_team_seat(rounds, model)
        from ebtui.core.analysis.source import facts_source

        source = facts_source(results)
        if source.prefetch():  # a first build: workers read the round files while this process reads the
            from ebtui.core import analysis, report  # noqa: F401  # store's index and imports what the report needs
            analysis.import_all()
        if not source.path.exists() and (n := len(results.stamps())) > 1000:  # (the sync reads the index too)
            note(f"building the analysis columns from {n} round files (once): {source.path}")
        facts = source.facts(progress, tournament=tournament_id, dilemma=dilemma)
        unreadable = _unreadable(ctx)
    except (StoreError, ValueError, TypeError) as exc:
        raise UsageError(f"{root}: {exc}") from None
    if model:
        facts = facts.take((facts.team_a == model) | (facts.team_b == model))
    return Selection(root, facts, rounds, tournament, unreadable,
                     {"tournament": tournament_id, "model": model, "dilemma": dilemma})


def _unreadable(ctx: AppContext) -> list[tuple[str, str]]:
    """Round files the report had to leave out: found afresh, plus any that failed to load just now."""
    results = ctx.store
    out = list(results.unreadable(deep=False))  # the rounds were just read: a changed one is in problems
    seen = {p for p, _ in out}
    out += [(p, r) for p, r in results.problems if p not in seen and "/rounds/" in p.replace("\\", "/")]
    return out


# -- families and the classifier ----------------------------------------------------------------------------
def families_for(data: Facts | Sequence[Round], models: ModelsConfig | None) -> dict[str, str]:
    """Each model's family for a task over `data` (columns or whole rounds), resolved once by the one rule
    (ebtui.core.families): models.toml (`family`, else its provider; None: no models.toml), else the family
    recorded in the rounds, else the name heuristic."""
    import json

    from ebtui.core.analysis.frame import Facts
    from ebtui.core.families import resolve_families, round_families

    if not isinstance(data, Facts):
        return round_families(data, models)
    # `newest_recorded` over the rows (the newest round's record wins), each distinct record read once: the
    # records applied in the order of their newest row give every model the same family
    newest: dict[str, int] = {}
    for pos, i in enumerate(_by_time(data.timestamp)):
        rec = data.families[i]
        if rec:
            newest[rec] = pos
    recorded: dict[str, str] = {}
    for rec in sorted(newest, key=newest.__getitem__):
        recorded.update(json.loads(rec))
    return resolve_families(data.names(), models, recorded)


def _by_time(timestamps: Any) -> list[int]:
    """Row numbers in `newest_recorded`'s order: by the timestamp's text, ties in row order."""
    stamps = [str(t or "") for t in timestamps.tolist()]
    return sorted(range(len(stamps)), key=stamps.__getitem__)


def families(ctx: AppContext, data: Facts | Sequence[Round], *, explicit: bool | None = None) -> dict[str, str]:
    """`families_for` with the context's models.toml. An unreadable models.toml is a UsageError when it was asked
    for (`explicit`: --models or --classifier; None: when the context names a models file), else no reason to
    refuse a report (every family then comes from the rounds or the names)."""
    from ebtui.config import ConfigError
    from ebtui.core.safe_text import strip_control

    asked = ctx.models_file is not None if explicit is None else explicit
    try:
        config: ModelsConfig | None = ctx.models
    except ConfigError as exc:
        if asked:
            raise UsageError(strip_control(str(exc))) from None
        config = None
    return families_for(data, config)


def classifier_client(ctx: AppContext, name: str) -> ModelClient:
    """The classifier model's client (an unknown name or missing key: UsageError)."""
    from ebtui.config import ConfigError

    try:
        return ctx.clients([name])[name]
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


async def classify(rounds: Sequence[Round], client: ModelClient) -> dict[str, ConsistencyClassification]:
    """A model's classification of every consistency-test answer (the client is closed after)."""
    from ebtui.core.analysis import classify_consistency_answers_with_model

    try:
        return await classify_consistency_answers_with_model(rounds, client)
    finally:
        await client.aclose()


# -- the report ---------------------------------------------------------------------------------------------
def agreement(root: Path) -> Mapping[tuple[str, str], Mapping[str, bool | None]] | None:
    """The judges' own views (`ebtui rejudge --views`), when the store has them."""
    if not (root / "judge_views").is_dir():
        return None
    from ebtui.core.judge_views import agreement_map

    return agreement_map(root)


@gc_paused()
def build_report(sel: Selection, fams: Mapping[str, str], classifications: Classifications | None = None, *,
                 seed: int | None = None, replicates: int | None = None) -> ReportData:
    """Every table of the report, computed once (what the files, `--json`, the API and the app show)."""
    from ebtui.core import analysis as an
    from ebtui.core.analysis import ahead
    from ebtui.core.analysis.ahead import Piece, computing_ahead
    from ebtui.core.analysis.bias_source import SECTION_FILE, bias_sample, cached_section, section_key
    from ebtui.core.analysis.common import read_entries
    from ebtui.core.analysis.report_ahead import report_pieces
    from ebtui.core.report import Omitted, build_report_data

    seed = an.DEFAULT_SEED if seed is None else seed
    replicates = an.DEFAULT_REPLICATES if replicates is None else replicates
    agree = agreement(sel.root)
    omitted: list[Omitted] = []
    folder = _columns_dir(sel.root)
    bias = None
    pieces: list[Piece] = []
    if len(sel.facts):
        rows, sampled = bias_sample(sel.facts)
        key = section_key(rows, families=fams, agreement=agree, seed=seed, replicates=replicates)

        def bias() -> BiasSection:  # (last: a fork may be computing it meanwhile)
            return cached_section(folder, rows, families=fams, agreement=agree, seed=seed, replicates=replicates,
                                  key=key)

        if sampled:
            omitted.append({"section": "judge bias and reliability", "reason": sampled})
        # a fork computes pieces ahead, on the other core, while this process fits the rest (analysis.ahead):
        # the descriptive tables, and where the judge-bias section is not kept (a cold report: new rows) the
        # slow cached pieces the caches lack
        if len(sel.facts) >= ahead.AHEAD_FROM and classifications is None:
            cold = folder is not None and all(k != key for k, _ in read_entries(folder / SECTION_FILE))
            pieces = report_pieces(sel.facts, rows, families=fams, agreement=agree, seed=seed,
                                   replicates=replicates, folder=folder if cold else None,
                                   bias_key=key if cold else None)
    with computing_ahead(pieces) as forked:
        # the section last while a fork may be computing it, else first, as it was: its memory (280 MB at
        # 130,000 judgments) is freed before the fits', not added to theirs (a 100,000-round report's peak)
        return build_report_data(sel.facts, classifications=classifications, families=fams, agreement=agree,
                                 seed=seed, replicates=replicates, judge_bias=bias if forked or bias is None
                                 else bias(), omitted=omitted, cache=folder)


def _columns_dir(root: Path) -> Path | None:
    """The analysis columns' folder of a store (where the judge-bias section is cached), None when absent."""
    from ebtui.core.analysis.source import FILE

    folder = root / Path(FILE).parent
    return folder if folder.is_dir() else None


def report_of(ctx: AppContext, *, tournament_id: str | None = None, model: str | None = None,
              dilemma: str | None = None, whole_rounds: bool = False, explicit_models: bool | None = None,
              seed: int | None = None, replicates: int | None = None, note: Callable[[str], None] = _quiet,
              progress: Callable[[int, int], None] | None = None) -> tuple[Selection, ReportData, dict[str, str]]:
    """The one computation behind every report of a selection (`ebtui report`, --json, --html, the Python
    API): `select`, the families, `build_report`. No rounds selected: UsageError."""
    sel = select(ctx, tournament_id=tournament_id, model=model, dilemma=dilemma, whole_rounds=whole_rounds,
                 note=note, progress=progress)
    sel.require_rounds()
    fams = families(ctx, sel.facts, explicit=explicit_models)
    data = build_report(sel, fams, seed=seed, replicates=replicates)
    with_human_audit(ctx, sel, data, fams)
    return sel, data, fams


def with_human_audit(ctx: AppContext, sel: Selection, data: ReportData, fams: Mapping[str, str]) -> Calibration:
    """The human audit's calibration of the selection (ebtui.core.usecases.audit), kept in `data` (its JSON's
    `human_audit`), so `ebtui report` and the Python API give the same object; returned for the report files."""
    from ebtui.core.usecases.audit import calibration

    cal = calibration(ctx, sel, fams)
    data.human_audit = cal.json()
    return cal


def api_report(ctx: AppContext, *, tournament_id: str | None = None, model: str | None = None,
               dilemma: str | None = None, explicit_models: bool | None = None, seed: int | None = None,
               replicates: int | None = None) -> tuple[Selection, ReportData, dict[str, str]]:
    """`report_of` for the Python API, whose errors are ValueErrors (nothing selected, an unreadable models
    file it named)."""
    try:
        return report_of(ctx, tournament_id=tournament_id, model=model, dilemma=dilemma,
                         explicit_models=explicit_models, seed=seed, replicates=replicates)
    except UsageError as exc:
        raise ValueError(str(exc)) from None


def default_title(sel: Selection) -> str:
    t, tid = sel.tournament, sel.filters.get("tournament")
    model, dilemma = sel.filters.get("model"), sel.filters.get("dilemma")
    subject = (t.name or t.id) if t else (tid or "all rounds")
    extra = ", ".join(x for x in (f"model {model}" if model else "", f"dilemma {dilemma}" if dilemma else "") if x)
    return f"ebtui report: {subject}" + (f" ({extra})" if extra else "")


@gc_paused()
def report_json(sel: Selection, data: ReportData) -> dict[str, Any]:
    """The object `ebtui report --json` prints (with `adaptive` for an adaptive tournament)."""
    return _report_object(sel, data.json())


@gc_paused()
def report_json_text(sel: Selection, data: ReportData) -> str:
    """What `ebtui report --json` prints: `json.dumps(report_json(sel, data), ensure_ascii=False,
    allow_nan=False)`, the same text, with each table's rows written at once (ebtui.core.report.dumps_json)."""
    from ebtui.core.report import dumps_json

    return dumps_json(_report_object(sel, data.json_parts()))


def _report_object(sel: Selection, parts: dict[str, object]) -> dict[str, Any]:
    from ebtui.core.report import adaptive_of

    adaptive = adaptive_of(sel.tournament)
    return {"filters": dict(sel.filters), **parts,
            "unreadable": [{"path": p, "reason": r} for p, r in sel.unreadable],
            **({"adaptive": adaptive} if adaptive is not None else {})}


def write_markdown(sel: Selection, data: ReportData, out: Path, title: str) -> Path:
    """report.md, its charts and one CSV per table into `out` (cannot write: UsageError)."""
    from ebtui.core.report import write_report

    try:
        return write_report(sel.facts, out, title=title, tournament=sel.tournament, data=data)
    except OSError as exc:
        raise UsageError(f"cannot write the report to {out}: {exc.strerror or exc}") from None


def write_html(sel: Selection, data: ReportData, out: Path, title: str) -> Path:
    """The self-contained web page (the rounds are read whole: `select(whole_rounds=True)`)."""
    from ebtui.core.export.html import write_html_report

    assert sel.rounds is not None
    try:
        return write_html_report(sel.rounds, out, data=data, title=title, tournament=sel.tournament)
    except OSError as exc:
        raise UsageError(f"cannot write the report to {out}: {exc.strerror or exc}") from None


def tournament_report(ctx: AppContext, tid: str, out: Path) -> tuple[Path, int]:
    """The app's export of a tournament: report.md, its charts and one CSV per table into `out`; returns
    report.md and the number of CSVs."""
    from ebtui.core.report import write_report

    rounds = ctx.store.load_rounds(tournament=tid)
    if not rounds:
        raise ValueError(f"tournament {tid} has no saved rounds")
    try:
        tournament = ctx.store.load_tournament(tid)
    except Exception:  # noqa: BLE001 - the report is still useful without its header
        tournament = None
    report = write_report(rounds, out, title=f"Tournament {tid}", tournament=tournament)
    return Path(report), len(list(out.glob("*.csv")))


# -- the Python API's report ----------------------------------------------------------------------------------
def select_rounds(ctx: AppContext, *, tournament: str | None = None, dilemma: str | None = None,
                  model: str | None = None) -> list[Round]:
    """Rounds, oldest first (the order `ebtui report` reads them in); model: only rounds in which it sat at
    Team A or B (as `report --model`)."""
    from ebtui.core.views.means import rounds_with_team_seat

    rounds = ctx.store.load_rounds(tournament=tournament, dilemma=dilemma)
    return rounds_with_team_seat(rounds, model) if model else list(rounds)


def rounds_report(ctx: AppContext, rounds: Sequence[Round], *, seed: int | None = None,
                  replicates: int | None = None) -> tuple[ReportData, dict[str, str]]:
    """The report's numbers over whole rounds and the families they used (an explicit models file of the
    context that cannot be read: ValueError)."""
    from ebtui.core import analysis as an
    from ebtui.core.judge_views import agreement_map
    from ebtui.core.report import build_report_data

    try:
        fams = families(ctx, rounds)
    except UsageError as exc:
        raise ValueError(str(exc)) from None
    data = build_report_data(rounds, families=fams, seed=an.DEFAULT_SEED if seed is None else seed,
                             replicates=an.DEFAULT_REPLICATES if replicates is None else replicates,
                             agreement=agreement_map(ctx.store_root))
    return data, fams


def write_html_of(rounds: Sequence[Round], data: ReportData, path: Path, title: str,
                  tournament: Tournament | None) -> Path:
    """The self-contained web report of these rounds (as `ebtui report --html`)."""
    from ebtui.core.export.html import write_html_report

    return write_html_report(rounds, path, data=data, title=title, tournament=tournament)


# -- the app's Analysis tab ---------------------------------------------------------------------------------
def analyse(data: Facts | Sequence[Round], models: ModelsConfig | None, *, cache: Path | None = None) -> Analysis:
    """The as-judged joint fit the report and `report --json` show, families from `models` (the app's
    models.toml; None: recorded in the rounds, else the names); `cache`: the store's analysis columns folder
    (where the report keeps its variance components)."""
    from ebtui.core.analysis import analyse_fit
    from ebtui.core.analysis.frame import Facts

    facts = data if isinstance(data, Facts) else Facts.from_rounds(data)
    return analyse_fit(facts, families=families_for(facts, models), cache=cache)


class AnalysisCancelled(Exception):
    """The analysis was cancelled (by the user, or because a newer one started)."""


class AnalysisResult(NamedTuple):
    rounds: int
    tables: dict[str, list[Table]]  # view -> descriptive tables
    fit: Analysis
    #: what the tab does not show or compute, and why ({section, reason}, as `report --json`'s `omitted`)
    omitted: list[dict[str, str]] = []
    #: the judgments counted (a round's own and those `ebtui rejudge` added)
    judgments: int = 0


def _adaptive_tables(ctx: AppContext, tournament_id: str) -> list[Table]:
    """An adaptive tournament's looks and anytime-valid intervals (ebtui.core.report.adaptive_tables), as the
    report shows them; none for any other tournament."""
    from ebtui.core.report import adaptive_of, adaptive_tables
    from ebtui.core.store import StoreError

    try:
        summary = adaptive_of(ctx.store.load_tournament(tournament_id))
    except StoreError:  # no tournament record (or an unreadable one): nothing adaptive to show
        return []
    return adaptive_tables(summary) if summary is not None else []


class AnalysisCache:
    """The Analysis tab's results, computed from the analysis columns beside the store
    (ebtui.core.analysis.source) and kept until the data change: a result is reused while the columns'
    generation (which moves whenever a round of the store changed) and the tournament are the same.

    `compute` runs in a worker thread; it calls `cancelled()` between steps (raising AnalysisCancelled when
    it answers True) and `progress(text)` before each step."""

    def __init__(self) -> None:
        self._key: tuple[object, ...] | None = None
        self._result: AnalysisResult | None = None

    @gc_paused()
    def compute(self, ctx: AppContext, tournament_id: str, models: ModelsConfig | None, *, views: tuple[str, ...],
                cancelled: Callable[[], bool] = lambda: False,
                progress: Callable[[str], None] = _quiet) -> AnalysisResult:
        """(rounds, view -> descriptive tables, the fit's Analysis)."""
        from ebtui.core.analysis import columnar
        from ebtui.core.analysis.source import facts_source, progress_text

        def step(text: str) -> None:
            if cancelled():
                raise AnalysisCancelled(text)
            progress(text)

        store = ctx.store
        step("reading the analysis columns")
        src = facts_source(store)

        def watch(done: int, total: int) -> None:  # a first analysis of a large store reads every round file
            step(progress_text(done, total))

        facts = src.facts(watch, tournament=tournament_id)
        from ebtui.core.usecases.audit import audits_stamp

        key = (id(store), tournament_id, src.generation, models is not None, audits_stamp(ctx))
        if key == self._key and self._result is not None:
            return self._result
        ex = columnar.Exchanges.of(facts)
        tables: dict[str, list[Table]] = {}
        for view in views:
            step(f"tables ({view})")
            tables[view] = columnar.analyse(facts, effective=view == "effective", ex=ex)
        step("joint fit and intervals")
        fit = analyse(facts, models, cache=_columns_dir(Path(store.root)))
        omitted: list[dict[str, str]] = []
        if len(facts):  # judge bias and reliability: from the same columns as the report's section 9
            step("judge bias and reliability")
            from ebtui.core.analysis.bias_report import bias_tables
            from ebtui.core.analysis.bias_source import bias_sample, cached_section

            # the families the fit used, as `ebtui report` does: the same numbers in both front ends
            root = Path(store.root)
            rows, sampled = bias_sample(facts)
            if sampled:
                omitted.append({"section": "judge bias and reliability", "reason": sampled})
            bias = bias_tables(cached_section(_columns_dir(root), rows, families=families_for(facts, models),
                                              agreement=agreement(root)))
            for view in tables:
                tables[view] = [*tables[view], *bias]
        rounds = len(set(facts.round.tolist()))
        if rounds > TRANSCRIPTS_UP_TO:
            omitted.append({"section": "compare view transcripts",
                            "reason": f"{rounds:,} rounds: transcripts are shown up to {TRANSCRIPTS_UP_TO:,} "
                                      "(every number is computed from every judgment)"})
        if (store.root / "audits").is_dir():  # the human audit's section (ebtui.core.usecases.audit)
            step("human audit")
            from ebtui.core.usecases.audit import audit_tables

            human = audit_tables(ctx, tournament_id, families_for(facts, models))
            for view in tables:
                tables[view] = [*tables[view], *human]
        adaptive = _adaptive_tables(ctx, tournament_id)
        for view in tables:
            tables[view] = [*tables[view], *adaptive]
        step("done")
        self._key, self._result = key, AnalysisResult(rounds, tables, fit, omitted, int(facts.judged.sum()))
        return self._result


def tab_rounds(ctx: AppContext, tournament_id: str, result: AnalysisResult) -> list[Round]:
    """The rounds the compare view shows transcripts of: read whole while the tournament is small enough
    (TRANSCRIPTS_UP_TO rounds), else none (the result's `omitted` says so)."""
    if any(o["section"] == "compare view transcripts" for o in result.omitted):
        return []
    return ctx.store.load_rounds(tournament=tournament_id)


def overall_criterion() -> str:
    """The criterion name of the mean of the seven criteria in the analysis tables."""
    from ebtui.core.analysis import OVERALL

    return OVERALL
