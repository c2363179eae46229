"""The TUI's analysis view shows the report's numbers: the same Table objects, with their intervals."""

from __future__ import annotations

from ebtui.core.analysis import analyse_fit
from ebtui.core.report import build_report_data
from ebtui.tui.widgets.analysis_view import interval_track, render_fit
from tests.support.sim_truth import default_truth, generate


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


def test_a_dot_sits_where_its_printed_figure_says_whatever_the_noise() -> None:
    # an offset of 0 lands on a cell boundary of the -2..2 track (14.5 cells): a machine whose BLAS gives
    # +1.7e-15 and one that gives -1.3e-15 must draw the same picture, the one the printed "+0.00" gives
    for noise in (1.6653345369377348e-15, -1.2836953722228372e-15, 0.0, -0.0, 0.004, -0.004):
        assert interval_track(None, noise, None, -2.0, 2.0) == interval_track(None, 0.0, None, -2.0, 2.0)
    # the interval's ends are placed the same way: a printed 1.00 is one cell whether it came out 0.996 or 1.004
    assert interval_track(0.996, 1.5, 2.0, -2.0, 2.0) == interval_track(1.004, 1.5, 2.0, -2.0, 2.0)
    # and a figure away from the boundary still moves the dot
    assert interval_track(None, 0.2, None, -2.0, 2.0) != interval_track(None, 0.0, None, -2.0, 2.0)
