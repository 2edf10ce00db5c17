"""Remote schemas resolve only when the project registers them, from local files, in
``[schemas]``: a ``$ref`` to such a URI then validates without any socket being opened; every
other remote ``$ref`` still fails closed naming its URI."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.goldens import ORIGIN, write_golden, write_json

URI = "https://schemas.example.com/address.json"
ADDRESS = {
    "type": "object",
    "required": ["city"],
    "properties": {"city": {"type": "string"}},
}


@pytest.fixture(autouse=True)
def no_sockets(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a socket was opened")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def project(tmp_path: Path, output: str, config: str | None) -> tuple[int, str, str]:
    schema = {"type": "object", "properties": {"address": {"$ref": URI}}}
    frontmatter = (
        f"id: g\ninput: q\nasserts:\n  - {{op: json-schema, value: {json.dumps(schema)}}}\n"
    )
    write_golden(tmp_path / "goldens", "g.md", frontmatter, ORIGIN)
    if config is not None:
        (tmp_path / "assay.toml").write_text(config, encoding="utf-8")
    outputs = write_json(tmp_path / "outputs.json", {"g": output})
    return run_cli(["gate", "goldens", "--outputs", outputs, "--json"], tmp_path)


def checks(out: str) -> list[dict[str, Any]]:
    return json.loads(out)["results"][0]["checks"]  # type: ignore[no-any-return]


def registered(tmp_path: Path, name: str = "address.json") -> str:
    folder = tmp_path / "schemas"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(json.dumps(ADDRESS), encoding="utf-8")
    return f'[schemas]\n"{URI}" = "schemas/{name}"\n'


def test_an_unregistered_remote_ref_fails_closed_naming_it(tmp_path: Path) -> None:
    code, out, err = project(tmp_path, '{"address": {"city": "Paris"}}', None)
    assert code == 0, err
    [check] = checks(out)
    assert check["passed"] is False
    assert check["evidence"] == {"reason": "remote_ref_refused", "uri": URI}


def test_a_registered_schema_is_served_from_its_file(tmp_path: Path) -> None:
    config = registered(tmp_path)
    code, out, err = project(tmp_path, '{"address": {"city": "Paris"}}', config)
    assert code == 0, err
    assert checks(out)[0]["passed"] is True
    code, out, err = project(tmp_path, '{"address": {"zip": 75001}}', config)
    [check] = checks(out)
    assert check["passed"] is False
    assert check["evidence"]["reason"] == "schema_validation_failed"
    assert check["evidence"]["issues"][0]["path"] == "/address/city"


def test_a_registered_schema_may_be_yaml(tmp_path: Path) -> None:
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "address.yaml").write_text(
        "type: object\nrequired: [city]\n", encoding="utf-8"
    )
    config = f'[schemas]\n"{URI}" = "schemas/address.yaml"\n'
    code, out, err = project(tmp_path, '{"address": {}}', config)
    assert code == 0, err
    assert checks(out)[0]["evidence"]["issues"][0]["path"] == "/address/city"


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (f'[schemas]\n"{URI}" = "schemas/missing.json"\n', "missing.json: file not found"),
        ('[schemas]\n"address.json" = "a.json"\n', "must be an absolute URI"),
        (f'[schemas]\n"{URI}" = 3\n', "must be a string"),
        ('schemas = "x"\n', "field 'schemas'"),
    ],
)
def test_a_bad_registration_is_one_line_naming_it(
    tmp_path: Path, config: str, expected: str
) -> None:
    code, out, err = project(tmp_path, "{}", config)
    assert code == 1, out
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert expected in err


def test_a_registered_file_that_is_no_schema_is_named(tmp_path: Path) -> None:
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "address.json").write_text("[1, 2]", encoding="utf-8")
    code, _, err = project(tmp_path, "{}", f'[schemas]\n"{URI}" = "schemas/address.json"\n')
    assert code == 1
    assert f"field 'schemas.\"{URI}\"'" in err and "must be an object or a boolean" in err
