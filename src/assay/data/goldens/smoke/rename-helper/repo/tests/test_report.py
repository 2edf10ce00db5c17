from src.report import render_report, totals

CSV = ["person,project,hours", "ana,web,3", "bo,api,2.5", "ana,web,1.5", "ana,api,4"]


def test_totals_sum_per_person_and_project():
    assert totals([{"person": "a", "project": "p", "hours": "1"}] * 3) == {("a", "p"): 3.0}


def test_render_report_aligns_columns():
    assert render_report(CSV).splitlines() == [
        "person | project | hours",
        "-------+---------+------",
        "ana    | api     |   4.0",
        "ana    | web     |   4.5",
        "bo     | api     |   2.5",
    ]


def test_format_row_pads_text_left_and_numbers_right():
    # The row helper is _format_row (it was _fmt, a name nobody could search for).
    from src.report import _format_row

    assert _format_row(["ana", "12.5"], [5, 6]) == "ana   |   12.5"
