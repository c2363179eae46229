"""The TUI's analysis view shows the report's numbers: the same Table objects, with their intervals."""

from __future__ import annotations

from sim_truth import default_truth, generate

from ebtui.core.analysis import analyse_fit
from ebtui.core.report import build_report_data
from ebtui.tui.widgets.analysis_view import interval_track, render_fit


def test_view_shows_the_json_numbers_with_intervals() -> None:
    truth = default_truth()
    rounds = generate(truth, dilemmas=4, seed=3)
    shown = render_fit(analyse_fit(rounds, families=truth.family, replicates=100).tables).plain
    out = build_report_data(rounds, families=truth.family, replicates=100).json()
    for m in out["models"]:
        line = next(ln for ln in shown.splitlines() if ln.strip().startswith(m["model"]))
        assert f"{m['mean']:.2f} [{m['ci_low']:.2f}, {m['ci_high']:.2f}]" in line
        assert f"raw {m['raw_mean']:.2f}" in line and f"n={m['n_rounds']} rounds" in line
    for j in out["judges"]:
        line = next(ln for ln in shown.splitlines() if ln.strip().startswith(j["judge"]) and "n=" in ln
                    and "rounds" not in ln)
        assert f"{j['offset']:+.2f} [{j['ci_low']:+.2f}, {j['ci_high']:+.2f}]" in line
    f = out["family_preference"]
    assert f"Same-family preference: {f['estimate']:+.2f} [{f['ci_low']:+.2f}, {f['ci_high']:+.2f}]" in shown


def test_blank_intervals_say_why_and_names_are_inert() -> None:
    truth = default_truth()
    rounds = [r for r in generate(truth, dilemmas=2, seed=1)]
    for r in rounds:
        if r.team_a_model == "gpt-y":
            r.team_a_model = "gpt-y\x1b[31m[bold]"
    shown = render_fit(analyse_fit(rounds, families=truth.family, replicates=50).tables).plain
    assert "(fewer than 3 dilemmas)" in shown and "\x1b" not in shown
    assert interval_track(2.0, 5.5, 9.0, 1.0, 10.0, width=10) == " ├──●───┤ "
    assert interval_track(None, 5.5, None, 1.0, 10.0, width=10).strip() == "●"
