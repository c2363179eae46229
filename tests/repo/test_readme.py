"""The README is a user guide: small, its set-up commands where .ci/run finds them, its links alive."""

from __future__ import annotations

import re

from tests.support.paths import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_is_under_12_kb() -> None:
    assert len(README.encode()) < 12_000


def test_both_commands_follow_their_markers_and_build_portably() -> None:
    for marker in ("<!-- run-command -->", "<!-- test-command -->"):
        after = README.split(marker, 1)[1].lstrip("\n")
        assert after.startswith("```sh\n"), marker
        command = after.split("\n")[1]
        assert "-DGGML_NATIVE=OFF" in command and "--no-cache-dir" in command


def test_every_local_link_exists() -> None:
    links = re.findall(r"\]\(([^)#\s]+)\)", README)
    local = [link for link in links if not link.startswith(("http://", "https://"))]
    assert local
    for link in local:
        assert (ROOT / link).exists(), link


def test_the_screenshot_shows_shipped_models_only() -> None:
    from ebtui.config import builtin_models

    shot = README.split("```text", 1)[1].split("```", 1)[0]
    named = set(re.findall(r"(?:Team [AB]|Judge) · ([\w.-]+)", shot))
    assert named and named <= set(builtin_models())
