"""The app's settings: config.toml and the EBTUI_* environment in one model, the environment winning."""

from __future__ import annotations

from pathlib import Path

import pytest

from ebtui.config import ConfigError, load_models_config
from ebtui.locations import models_config_candidates, store_dir
from ebtui.settings import SettingsError, config_file, load_settings


def _config(text: str) -> Path:
    path = config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_the_file_sets_what_the_environment_leaves_unset(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("EBTUI_STORE")
    path = _config(f'store = "{tmp_path / "from-file"}"\nstore_fsync = false\n[keymap]\n"app.help" = "f9"\n')
    settings = load_settings()
    assert settings.store == tmp_path / "from-file" and settings.store_fsync is False
    assert settings.origin("store") == str(path) and settings.origin("models") is None
    assert store_dir() == tmp_path / "from-file" and store_dir(tmp_path / "flag") == tmp_path / "flag"


def test_the_environment_wins_over_the_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _config(f'store = "{tmp_path / "from-file"}"\nstore_fsync = false\nmodels = "{tmp_path / "m.toml"}"\n')
    monkeypatch.setenv("EBTUI_STORE", str(tmp_path / "from-env"))
    monkeypatch.setenv("EBTUI_STORE_FSYNC", "yes")
    settings = load_settings()
    assert settings.store == tmp_path / "from-env" and settings.origin("store") == "EBTUI_STORE"
    assert settings.store_fsync is True and settings.models == tmp_path / "m.toml"
    assert models_config_candidates()[0] == tmp_path / "m.toml"


def test_a_models_file_named_in_config_toml_must_exist(tmp_path: Path) -> None:
    path = _config(f'models = "{tmp_path / "gone.toml"}"\n')
    with pytest.raises(ConfigError, match=rf"gone\.toml: models file not found \(from {path}\)"):
        load_models_config()


@pytest.mark.parametrize(("text", "words"), [
    ("store_fsync = 1\n", "store_fsync must be true or false"),
    ("store = 3\n", "store must be a path"),
    ('models = ""\n', "models must be a path"),
])
def test_a_bad_value_is_one_line_naming_file_and_key(text: str, words: str) -> None:
    path = _config(text)
    with pytest.raises(SettingsError) as info:
        load_settings()
    assert str(path) in str(info.value) and words in str(info.value) and "\n" not in str(info.value)


def test_a_file_that_is_not_toml_adds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EBTUI_STORE")
    _config("store = [unclosed\n")
    assert load_settings().store is None and store_dir() == Path.cwd() / "saved"
