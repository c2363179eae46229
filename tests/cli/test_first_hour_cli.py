"""A new user's first mistakes, as a real subprocess: a read-only store, Ctrl-C during `ebtui run`, the
resume hint it prints, a dilemma without a consistency case."""

from __future__ import annotations

import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from ebtui.core.dilemmas import load_dilemmas
from ebtui.core.preflight import PreflightError, check_store_writable, command_hint
from ebtui.core.records import NO_CONSISTENCY_CASE, PhaseStatus, PhaseType, Round, RoundStatus
from ebtui.core.round import RoundSpec, play_round
from ebtui.core.store import ResultsStore
from ebtui.providers.scripted import ScriptedClient
from tests.support.docx_docs import paragraphs_doc
from tests.support.paths import ROOT, subprocess_env
from tests.support.processes import wait_for

DILEMMA = "fidelity_slider"
SLOW = '[models.slow]\nprovider = "scripted"\ntokens_per_second = 40\n'


def env() -> dict[str, str]:
    return subprocess_env()


def ebtui(*args: str, timeout: float = 60, **kw) -> subprocess.CompletedProcess[str]:  # noqa: ANN003
    kw.setdefault("env", env())
    return subprocess.run([sys.executable, "-m", "ebtui", *args], capture_output=True, text=True,
                          timeout=timeout, **kw)


def running(store: Path, phase: str) -> Round | None:
    for f in sorted((store / "rounds").glob("*.json")) if (store / "rounds").is_dir() else []:
        try:
            r = Round.model_validate_json(f.read_text(encoding="utf-8"))
        except ValueError:
            continue
        ph = r.phase(phase)
        if ph is not None and ph.status == PhaseStatus.RUNNING:
            return r
    return None


# -- a read-only store ---------------------------------------------------------------------------------

def _read_only_dir() -> tuple[Path, dict[str, object]]:
    """A store directory marked read-only (chmod 555). Root could still write it, but ebtui takes the mode
    as meant: it refuses a store with no write permission at all, for every user."""
    base = Path(tempfile.mkdtemp(prefix="ebtui-ro-"))
    base.chmod(0o755)
    store = base / "store"
    (store / "rounds").mkdir(parents=True)
    store.chmod(0o555)
    (store / "rounds").chmod(0o555)
    return store, {"cwd": str(base)}


@pytest.fixture
def read_only_store():  # noqa: ANN201
    store, kw = _read_only_dir()
    yield store, kw
    for d in (store / "rounds", store):
        d.chmod(0o755)
    shutil.rmtree(store.parent, ignore_errors=True)


def test_read_only_store_is_one_line_naming_it_before_any_call(read_only_store) -> None:  # noqa: ANN001
    store, kw = read_only_store
    models = store.parent / "m.toml"
    # a model that would take minutes: the check must come first
    models.write_text('[models.slow]\nprovider = "scripted"\ntokens_per_second = 1\nlatency_s = 60\n')
    models.chmod(0o644)
    t0 = time.monotonic()
    proc = ebtui("run", "--dilemma", DILEMMA, "--team-a", "slow", "--team-b", "slow", "--judge", "slow",
                 "--models", str(models), "--store", str(store), **kw)
    elapsed = time.monotonic() - t0
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("ebtui: error: ") and str(store) in lines[0] and "not writable" in lines[0]
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert elapsed < 20  # interpreter start-up on a loaded machine; no model call was made
    assert list((store / "rounds").iterdir()) == []
    # a store that does not exist yet, inside a read-only directory
    proc = ebtui("run", "--dilemma", DILEMMA, "--team-a", "slow", "--team-b", "slow", "--judge", "slow",
                 "--models", str(models), "--store", str(store / "new"), **kw)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and str(store) in proc.stderr


def test_the_app_refuses_a_read_only_store_before_opening(read_only_store) -> None:  # noqa: ANN001
    store, kw = read_only_store
    proc = ebtui("--store", str(store), timeout=30, stdin=subprocess.DEVNULL, **kw)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and str(store) in proc.stderr
    assert "Traceback" not in proc.stderr


def test_store_under_a_file_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    proc = ebtui("run", "--dilemma", DILEMMA, "--team-a", "scripted", "--team-b", "scripted", "--judge",
                 "scripted", "--store", str(blocker / "st"))
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and str(blocker) in proc.stderr and "Traceback" not in proc.stderr


def test_check_store_writable_accepts_a_new_store_and_creates_nothing(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b"
    assert check_store_writable(target) == target
    assert not (tmp_path / "a").exists()
    (tmp_path / "f").write_text("")
    with pytest.raises(PreflightError, match="not a directory"):
        check_store_writable(tmp_path / "f")


# -- Ctrl-C during `ebtui run`, and the resume hint it prints ------------------------------------------

def test_sigint_during_run_exits_130_and_the_hint_resumes_it(tmp_path: Path) -> None:
    store = tmp_path / "my store"  # a space: the hint must quote it
    models = tmp_path / "m.toml"
    models.write_text(SLOW)
    args = ["run", "--dilemma", DILEMMA, "--team-a", "scripted", "--team-b", "slow", "--judge", "scripted",
            "--models", str(models), "--store", str(store), "--max-tokens", "900"]
    proc = subprocess.Popen([sys.executable, "-m", "ebtui", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env())
    try:
        wait_for(lambda: running(store, "response"), timeout=30, what="the response to start")
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "Event loop is closed" not in err and "Exception ignored" not in err
    hint = err.split("Resume with:", 1)[1].strip().splitlines()[0]
    words = shlex.split(hint)
    assert words[:2] == ["ebtui", "run"]
    assert words[words.index("--models") + 1] == str(models)
    assert words[words.index("--store") + 1] == str(store)
    assert words[words.index("--max-tokens") + 1] == "900"
    rid = words[words.index("--resume") + 1]
    saved = ResultsStore(store).load_round(rid)
    assert saved.status == RoundStatus.INCOMPLETE
    assert saved.phase("presentation").status == PhaseStatus.COMPLETE
    presentation = saved.phase("presentation").model_dump()

    # pasted as is (with a fast team B this time is not allowed: the hint is the command); the models file it
    # names now lets `slow` answer at full speed (the pace only had to leave time for the Ctrl-C)
    models.write_text(SLOW.replace("tokens_per_second = 40\n", ""))
    again = ebtui(*words[1:], timeout=120)
    assert again.returncode == 0, again.stderr
    done = ResultsStore(store).load_round(rid)
    assert done.status == RoundStatus.COMPLETE
    assert done.phase("presentation").model_dump() == presentation  # kept, not re-asked
    assert len(list((store / "rounds").glob("*.json"))) == 1


def test_command_hint_quotes_and_drops_unset_options() -> None:
    hint = command_hint(["ebtui", "run"], [("--store", "a b"), ("--models", None), ("--blind-judge", True),
                                           ("--json", False), ("--max-tokens", 5)])
    assert shlex.split(hint) == ["ebtui", "run", "--store", "a b", "--blind-judge", "--max-tokens", "5"]


# -- a dilemma without a consistency case --------------------------------------------------------------

def _doc_without_consistency_case(path: Path) -> Path:
    return paragraphs_doc(path, "Dilemma 1: The Shared Well", "Category: Resources | Structure: Symmetric",
                          "Core Scenario:",
                          "A village well serves two farms in a drought; one farm dug it, the other has no water.",
                          "Question: Must the farm that dug the well share it?", "Asymmetric Features:",
                          "The other farm once refused to help dig.")


def test_run_without_a_consistency_case_sends_no_consistency_prompt(tmp_path: Path) -> None:
    document = _doc_without_consistency_case(tmp_path / "d.docx")
    store = tmp_path / "st"
    listing = ebtui("dilemmas", "--document", str(document))
    assert listing.returncode == 0
    assert listing.stdout.splitlines()[2].split()[-1] == "NONE"
    assert "No consistency case" in listing.stdout and "shared_well" in listing.stdout

    proc = ebtui("run", "--dilemma", "shared_well", "--team-a", "scripted", "--team-b", "scripted",
                 "--judge", "scripted", "--document", str(document), "--store", str(store))
    assert proc.returncode == 0, proc.stderr
    assert "skipped (no_consistency_case)" in proc.stdout
    files = list((store / "rounds").glob("*.json"))
    r = Round.model_validate_json(files[0].read_text(encoding="utf-8"))
    cons = r.phase("consistency_test")
    assert cons.status == PhaseStatus.SKIPPED and cons.error_kind == NO_CONSISTENCY_CASE
    assert cons.prompt == "" and cons.attempts == 0 and cons.usage.output_tokens == 0
    assert r.status == RoundStatus.COMPLETE and r.judgment is not None
    assert "no consistency case" in r.phase("judgment").prompt


class RecordingClient(ScriptedClient):
    def __init__(self) -> None:
        super().__init__(name="rec")
        self.prompts: list[str] = []

    async def stream(self, prompt: str, system_prompt: str, **kw):  # noqa: ANN003, ANN201
        self.prompts.append(prompt)
        async for item in super().stream(prompt, system_prompt, **kw):
            yield item


async def test_engine_never_sends_a_consistency_prompt_without_a_case(tmp_path: Path) -> None:
    d = load_dilemmas(_doc_without_consistency_case(tmp_path / "d.docx"))[0]
    assert not d.has_consistency_case
    client = RecordingClient()
    r = await play_round(RoundSpec(d, "rec", "rec", "rec"), {"rec": client})
    assert len(client.prompts) == 4  # presentation, response, rebuttal, judgment
    assert not any("# Your task: Team A's consistency test" in p for p in client.prompts)
    assert r.phase(PhaseType.CONSISTENCY_TEST).status == PhaseStatus.SKIPPED
    # and a dilemma with a case still gets its consistency test
    d.consistency_case = "A second well, dug by both."
    client2 = RecordingClient()
    r2 = await play_round(RoundSpec(d, "rec", "rec", "rec"), {"rec": client2})
    assert len(client2.prompts) == 5 and r2.phase(PhaseType.CONSISTENCY_TEST).status == PhaseStatus.COMPLETE


# -- Ctrl-C during `ebtui tournament`: the hint carries --models and --store ------------------------------

@pytest.mark.parametrize("before", [pytest.param(False, marks=pytest.mark.slow), True],  # the same path twice: one
                         ids=["options-after", "options-before-the-command"])  # in the default run
def test_sigint_during_tournament_exits_130_with_a_pasteable_hint(tmp_path: Path, before: bool) -> None:
    store = tmp_path / "ts"
    models = tmp_path / "models.toml"
    models.write_text("".join(f'[models.{n}]\nprovider = "scripted"\ntokens_per_second = 400\n' for n in "xyz"))
    config = tmp_path / "t.toml"
    config.write_text('name = "hint"\nmodels = ["x", "y", "z"]\ndilemmas = ["fidelity_slider"]\n'
                      'judges = "rotate"\nconcurrency = 1\n')
    document = ROOT / "ebtui" / "data" / "builtin_dilemmas.docx"
    if before:  # `ebtui --document D --models M --store S tournament CONFIG`
        args = ["--document", str(document), "--models", str(models), "--store", str(store), "tournament", str(config)]
    else:
        args = ["tournament", str(config), "--models", str(models), "--store", str(store)]
    proc = subprocess.Popen([sys.executable, "-m", "ebtui", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**env(), "EBTUI_STORE_FSYNC": "0"})
    try:
        wait_for(lambda: running(store, "response"), timeout=30, what="a round to start")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    hint = err.split("Resume with:", 1)[1].strip().splitlines()[0]
    words = shlex.split(hint)
    if before:
        assert words[:5] == ["ebtui", "--document", str(document), "tournament", str(config)]
    else:
        assert words[:3] == ["ebtui", "tournament", str(config)]
    assert "--resume" in words
    assert words[words.index("--models") + 1] == str(models)
    assert words[words.index("--store") + 1] == str(store)
    # the rest of the tournament at full speed (the pace only had to leave time for the Ctrl-C): the same models
    models.write_text("".join(f'[models.{n}]\nprovider = "scripted"\n' for n in "xyz"))
    again = ebtui(*words[1:], timeout=240, env={**env(), "EBTUI_STORE_FSYNC": "0"})
    assert again.returncode == 0, again.stderr[-2000:]
