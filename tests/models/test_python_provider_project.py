"""The python provider and the project: its module is found in the project root without
``PYTHONPATH``, and the cache keys its outputs by the sha256 of that module's file, so an
edited function is a cache miss (and the cache never holds the code itself)."""

from __future__ import annotations

import hashlib
import json
import os
import py_compile
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import assay.cli
from assay.models._cache import cache_key, default_cache_path, provider_identity
from assay.models.providers import ProviderConfig
from assay.models.providers._project_modules import project_modules
from assay.models.providers.python import FunctionError, load_function, source_digest
from tests.helpers.cli import run_cli

GOLDENS = '{"id": "g1", "input": "hello", "asserts": ["contains:x"]}\n'
CANDIDATES = (
    "provider: {type: python, function: 'myprov:answer'}\n"
    "candidates:\n  - {id: a, prompt: '{{ input }}'}\n"
)


def provider_source(text: str) -> str:
    return f"def answer(prompt: str) -> str:\n    return {text!r}\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder: goldens, candidates naming ``myprov:answer``, and myprov.py."""
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / "goldens.jsonl").write_text(GOLDENS, encoding="utf-8")
    (folder / "candidates.yaml").write_text(CANDIDATES, encoding="utf-8")
    (folder / "myprov.py").write_text(provider_source("x"), encoding="utf-8")
    return folder


@pytest.fixture
def console_script_path(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bool]]:
    """Run the in-process CLI with the ``sys.path`` of the ``assay`` console script.

    run_cli puts the working directory first on sys.path, as ``python -m`` does; the
    installed ``assay`` script does not, which is where a module of the project went
    unfound. The wrapper takes the project off sys.path before the run, and records after it
    whether the run left the project there (it must not: no lasting change of sys.path).
    """
    real_main: Callable[..., Any] = assay.cli.main
    left_on_path: list[bool] = []

    def without_cwd(*args: Any, **kwargs: Any) -> Any:
        here = Path.cwd().resolve()
        sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
        try:
            return real_main(*args, **kwargs)
        finally:
            left_on_path.append(any(Path(p or ".").resolve() == here for p in sys.path))

    monkeypatch.setattr(assay.cli, "main", without_cwd)
    yield left_on_path


def run_eval(folder: Path) -> dict[str, Any]:
    """``assay eval goldens.jsonl --candidates candidates.yaml --json`` without PYTHONPATH:
    exit 0, no traceback, the parsed document."""
    code, out, err = run_cli(
        ["eval", "goldens.jsonl", "--candidates", "candidates.yaml", "--json"],
        folder,
        env={"PYTHONPATH": None},
    )
    assert code == 0, f"exit {code}\nstdout: {out}\nstderr: {err}"
    assert "Traceback" not in err
    document: dict[str, Any] = json.loads(out)
    return document


def output_of(document: dict[str, Any]) -> Any:
    [result] = document["results"]
    return result["output"]


# --------------------------------------------------------------------------- the project root


def test_a_module_of_the_project_imports_without_pythonpath(
    project: Path, console_script_path: list[bool]
) -> None:
    document = run_eval(project)
    assert output_of(document) == "x"
    assert console_script_path == [False]  # the run did not leave the project on sys.path


def test_a_module_missing_from_the_project_is_one_line_exit_1(
    project: Path, console_script_path: list[bool]
) -> None:
    (project / "myprov.py").unlink()
    code, _out, err = run_cli(
        ["eval", "goldens.jsonl", "--candidates", "candidates.yaml", "--json"],
        project,
        env={"PYTHONPATH": None},
    )
    assert code == 1
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert "cannot import 'myprov' for 'myprov:answer'" in err
    assert console_script_path == [False]


def test_load_function_finds_the_module_in_the_root_and_leaves_sys_path_as_it_was(
    tmp_path: Path,
) -> None:
    name = f"assay_rootprov_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(provider_source("x"), encoding="utf-8")
    before = list(sys.path)
    try:
        assert load_function(f"{name}:answer", tmp_path)("p") == "x"
        assert sys.path == before
        with pytest.raises(FunctionError, match=f"cannot import {name!r}"):
            load_function(f"{name}:answer", tmp_path / "elsewhere")
    finally:
        sys.modules.pop(name, None)


def test_a_module_edited_in_a_long_lived_process_is_reloaded(tmp_path: Path) -> None:
    # No run_cli to forget the module between the two loads (as the pytest plugin or a
    # library user would): the edited file must still be the code that runs, since it is
    # the code the cache key is made from.
    name = f"assay_editprov_{tmp_path.name.replace('-', '_')}"
    path = tmp_path / f"{name}.py"
    path.write_text(provider_source("x"), encoding="utf-8")
    try:
        assert load_function(f"{name}:answer", tmp_path)("p") == "x"
        path.write_text(provider_source("yy"), encoding="utf-8")  # another size: no stale pyc
        assert load_function(f"{name}:answer", tmp_path)("p") == "yy"
    finally:
        sys.modules.pop(name, None)


# --------------------------------------------------------------------------- the cache


def test_editing_the_function_file_is_a_cache_miss(
    project: Path, console_script_path: list[bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Bytecode files on (as on a fresh machine), one written for "x" by the project's own
    # tools, and the edit within the same second to the same size: that .pyc would still
    # pass for the new source.
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    source = project / "myprov.py"
    first = run_eval(project)
    assert output_of(first) == "x"
    assert first["summary"]["model_calls"]["cache_hits"] == 0
    py_compile.compile(str(source), doraise=True)

    stamp = source.stat()
    source.write_text(provider_source("y"), encoding="utf-8")
    assert source.stat().st_size == stamp.st_size
    os.utime(source, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    second = run_eval(project)
    assert output_of(second) == "y"
    assert second["summary"]["model_calls"]["cache_hits"] == 0
    assert second["summary"]["model_calls"]["made"] == 1

    third = run_eval(project)
    assert output_of(third) == "y"
    assert third["summary"]["model_calls"]["cache_hits"] == 1
    assert third["summary"]["model_calls"]["made"] == 0


def test_the_cache_holds_a_digest_of_the_file_never_its_text(project: Path) -> None:
    source = (project / "myprov.py").read_bytes()
    try:  # the identity imports the module (to find the helpers it loads): forget it after
        config = ProviderConfig(type="python", function="myprov:answer")
        identity = provider_identity(config, project)
    finally:
        sys.modules.pop("myprov", None)
    assert identity["source_sha256"] == hashlib.sha256(source).hexdigest()
    assert source_digest("myprov:answer", project) == hashlib.sha256(source).hexdigest()
    run_eval(project)
    cache_files = default_cache_path(project).parent.iterdir()
    stored = b"".join(p.read_bytes() for p in cache_files if p.is_file())
    assert stored  # the run did write the cache
    assert b"def answer" not in stored


def test_the_identity_of_the_other_provider_types_is_unchanged() -> None:
    # The keys these configs had before the python provider's file digest was added to its
    # identity: existing caches of every other type must still hit.
    assert (
        cache_key(ProviderConfig(type="echo"), "hello", 0)
        == "a91a5bb2f5ac2440f6d1c6ed92e3396005d07f0151751f5c9bdca1c452e3e8af"
    )
    openai = ProviderConfig(type="openai", model="m", temperature=0.5, seed=3)
    assert (
        cache_key(openai, "hello", 1, "judge")
        == "34b68d3e02f00a86910651afe63d609a030fb410e79187b7bbf3911802c81c7f"
    )
    command = ProviderConfig(type="command", command="cat")
    assert (
        cache_key(command, "hello", 0)
        == "6cf04c09f44fb4b64e09792672f0f0e499b708abb302760c2b99ba34e4582ddb"
    )
    assert provider_identity(command) == command.cache_identity()


# --------------------------------------------------------------------------- its helpers

HELPER_PROVIDER = (
    "import helpers\n"
    "from tools.words import shout\n\n"
    "def answer(prompt: str) -> str:\n"
    "    return shout(helpers.ANSWER)\n"
)


def helper_project(folder: Path) -> None:
    """myprov imports two modules of the project: helpers.py, and tools/words.py (a package)."""
    (folder / "myprov.py").write_text(HELPER_PROVIDER, encoding="utf-8")
    (folder / "helpers.py").write_text("ANSWER = 'x'\n", encoding="utf-8")
    (folder / "tools").mkdir()
    (folder / "tools" / "__init__.py").write_text("", encoding="utf-8")
    (folder / "tools" / "words.py").write_text(
        "def shout(text):\n    return text.upper()\n", encoding="utf-8"
    )


def calls_of(document: dict[str, Any]) -> tuple[int, int]:
    calls = document["summary"]["model_calls"]
    return calls["made"], calls["cache_hits"]


def test_editing_a_module_the_provider_imports_is_a_cache_miss(
    project: Path, console_script_path: list[bool]
) -> None:
    # Issue 27, item 14: only the provider's own file was in the key, so an edited helper
    # left the old answers in the cache.
    helper_project(project)
    first = run_eval(project)
    assert (output_of(first), calls_of(first)) == ("X", (1, 0))
    assert calls_of(run_eval(project)) == (0, 1)  # nothing changed: a hit

    # Another size: an edit within the same second to the same size can still import a stale
    # .pyc (the bytecode cache checks mtime and size), which is not what this test is about.
    (project / "helpers.py").write_text("ANSWER = 'y'  # edited\n", encoding="utf-8")
    second = run_eval(project)
    assert (output_of(second), calls_of(second)) == ("Y", (1, 0))

    (project / "tools" / "words.py").write_text(
        "def shout(text):\n    return text + '!'\n", encoding="utf-8"
    )
    third = run_eval(project)
    assert (output_of(third), calls_of(third)) == ("y!", (1, 0))
    assert calls_of(run_eval(project)) == (0, 1)


def test_the_key_names_the_project_modules_the_provider_loaded(project: Path) -> None:
    helper_project(project)
    (project / ".venv" / "lib").mkdir(parents=True)  # an environment inside the project
    config = ProviderConfig(type="python", function="myprov:answer")
    try:
        identity = provider_identity(config, project)
    finally:
        for name in ("myprov", "helpers", "tools", "tools.words"):
            sys.modules.pop(name, None)
    digest = {
        path: hashlib.sha256((project / path).read_bytes()).hexdigest()
        for path in ("helpers.py", "tools/__init__.py", "tools/words.py")
    }
    # The provider's own file keeps its key; json, pathlib and the rest of the standard
    # library (outside the project) are not in it; the cache holds digests, never code.
    assert identity["project_modules"] == digest
    assert identity["source_sha256"] == source_digest("myprov:answer", project)


def test_a_provider_with_no_helper_keeps_its_key(project: Path) -> None:
    config = ProviderConfig(type="python", function="myprov:answer")
    try:
        identity = provider_identity(config, project)
    finally:
        sys.modules.pop("myprov", None)
    assert "project_modules" not in identity  # existing caches of such a provider still hit


def test_a_helper_edited_in_a_long_lived_process_is_imported_again(tmp_path: Path) -> None:
    # No run_cli to forget the modules between the two keys: the helper in memory would be the
    # old one, and the new key would store the old code's answers.
    tag = tmp_path.name.replace("-", "_")
    provider, helper = f"assay_prov_{tag}", f"assay_helper_{tag}"
    (tmp_path / f"{provider}.py").write_text(
        f"from {helper} import ANSWER\n\ndef answer(prompt):\n    return ANSWER\n",
        encoding="utf-8",
    )
    (tmp_path / f"{helper}.py").write_text("ANSWER = 'x'\n", encoding="utf-8")
    config = ProviderConfig(type="python", function=f"{provider}:answer")
    try:
        before = provider_identity(config, tmp_path)
        assert load_function(f"{provider}:answer", tmp_path)("p") == "x"
        (tmp_path / f"{helper}.py").write_text("ANSWER = 'yy'\n", encoding="utf-8")
        after = provider_identity(config, tmp_path)
        assert after["project_modules"] != before["project_modules"]
        assert load_function(f"{provider}:answer", tmp_path)("p") == "yy"
    finally:
        sys.modules.pop(provider, None)
        sys.modules.pop(helper, None)


def test_every_way_of_importing_a_helper_is_found(tmp_path: Path) -> None:
    # A constant imported by name, relative imports in a package, an import inside the
    # function, a module bound by importlib; not the standard library, nor packages installed
    # in an environment inside the project.
    tag = tmp_path.name.replace("-", "_")
    pkg = tmp_path / f"assay_pkg_{tag}"
    (pkg / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "prov.py": (
            "import importlib, json\n"
            "from .consts import NAME\n"
            "from . import util\n"
            "from .sub import deep\n"
            "import site_pkg\n"
            f"bound = importlib.import_module('{pkg.name}_dyn')\n\n"
            "def answer(prompt):\n"
            "    import lazy_helper\n"
            "    return NAME\n"
        ),
        "consts.py": "NAME = 'n'\n",
        "util.py": "",
        "sub/__init__.py": "",
        "sub/deep.py": "",
    }
    for name, text in files.items():
        (pkg / name).write_text(text, encoding="utf-8")
    (tmp_path / f"{pkg.name}_dyn.py").write_text("", encoding="utf-8")
    (tmp_path / "lazy_helper.py").write_text("", encoding="utf-8")
    installed = tmp_path / ".venv" / "lib" / "python3.11" / "site-packages"
    installed.mkdir(parents=True)
    (installed / "site_pkg.py").write_text("", encoding="utf-8")
    sys.path.insert(0, str(installed))
    try:
        load_function(f"{pkg.name}.prov:answer", tmp_path)
        found = project_modules(sys.modules[f"{pkg.name}.prov"], tmp_path.resolve())
    finally:
        sys.path.remove(str(installed))
        for name in [n for n in sys.modules if n.startswith(pkg.name) or n == "site_pkg"]:
            sys.modules.pop(name, None)
    paths = sorted(p.relative_to(tmp_path.resolve()).as_posix() for p in found.values())
    prefix = pkg.name
    assert paths == sorted(
        [
            f"{prefix}/__init__.py",
            f"{prefix}/consts.py",
            f"{prefix}/util.py",
            f"{prefix}/sub/__init__.py",
            f"{prefix}/sub/deep.py",
            f"{prefix}_dyn.py",
            "lazy_helper.py",
        ]
    )
