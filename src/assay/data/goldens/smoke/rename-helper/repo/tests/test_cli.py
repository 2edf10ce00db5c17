from src.cli.main import main


def test_main_prints_the_report_and_its_total(tmp_path, capsys):
    hours = tmp_path / "hours.csv"
    hours.write_text("person,project,hours\nana,web,3\nbo,api,2.5\n", encoding="utf-8")
    assert main([str(hours)]) == 0
    assert capsys.readouterr().out.splitlines()[-2:] == [
        "bo     | api     |   2.5",
        "total  |         |   5.5",
    ]


def test_main_needs_one_file(capsys):
    assert main([]) == 2
    assert "usage" in capsys.readouterr().err
