"""Plugins: ops, provider types, similarity backends and formats from entry points.

The real plugin package under tests/plugin_pkg (distribution ``assay-test-plugin``, module
``myplugin``) is installed into the test venv by scripts/test.sh, so most tests read genuine
installed metadata; the edge cases a real package cannot easily show (a name declared twice, a
module with a syntax error) use entry points made here.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import importlib.util
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

import assay
from assay import plugins
from assay.asserts import (
    KNOWN_OPS,
    OPS,
    OutputView,
    _registry,
    find_op,
    known_ops,
    parse_assert,
    register_op,
    run_assert,
)
from assay.asserts._similarity import BUILTIN_BACKENDS, get_backend, is_known_backend
from assay.cli import main
from assay.comparison import evaluate_deterministic_scorer
from assay.errors import ConfigError, ValidationError
from assay.models import provider_config
from assay.models.providers import (
    PROVIDER_TYPES,
    Completion,
    ProviderConfig,
    ProviderError,
    is_known_provider_type,
    make_provider,
)
from assay.plugins import PluginError
from assay.views._formats import RenderContext, render_plugin_format

BROKEN_MESSAGE = (
    "plugin 'myorg/broken' (entry point myplugin.broken:check) cannot load: ModuleNotFoundError:"
)


@pytest.fixture(scope="module", autouse=True)
def _plugin_package_installed() -> None:
    if importlib.util.find_spec("myplugin") is None:
        pytest.fail(
            "the test plugin package is not installed: pip install ./tests/plugin_pkg"
            " (scripts/test.sh does it)",
            pytrace=False,
        )


@pytest.fixture(autouse=True)
def _fresh_registries(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every test starts with nothing scanned, loaded or registered, and leaves it so."""
    monkeypatch.setattr(_registry, "_REGISTERED", {})
    plugins.clear_plugin_cache()
    yield
    plugins.clear_plugin_cache()


def fake_entry_points(
    monkeypatch: pytest.MonkeyPatch, group: str, declared: Sequence[tuple[str, str]]
) -> None:
    """Make ``group`` hold exactly ``declared`` (name, 'module:attr') entry points."""
    made = [importlib.metadata.EntryPoint(name, value, group) for name, value in declared]

    def entry_points(*, group: str | None = None) -> list[importlib.metadata.EntryPoint]:
        return [entry for entry in made if entry.group == group]

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    plugins.clear_plugin_cache()


def run_main(args: Sequence[str | Path], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """``assay *args`` in this process: (exit code, stderr)."""
    with pytest.raises(SystemExit) as exit_info:
        main([str(a) for a in args])
    code = exit_info.value.code
    return (code if isinstance(code, int) else 0), capsys.readouterr().err


def gate(
    tmp_path: Path,
    asserts: list[Any],
    output: str,
    capsys: pytest.CaptureFixture[str],
) -> tuple[int, list[dict[str, Any]], str]:
    """``assay gate`` one golden with ``asserts`` on ``output``: (code, its checks, stderr)."""
    goldens = tmp_path / "goldens.jsonl"
    goldens.write_text(json.dumps({"id": "g", "input": "q", "asserts": asserts}) + "\n")
    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps({"g": output}))
    report = tmp_path / "report.json"
    report.unlink(missing_ok=True)
    args = ["gate", goldens, "--outputs", outputs, "--json", "--output", report, "--no-cache"]
    code, err = run_main(args, capsys)
    # With --output, stderr starts with where the report went and the verdict: drop those.
    if err.startswith(f"assay: report written to {report}\n"):
        err = ""
    if not report.exists():
        return code, [], err
    (result,) = json.loads(report.read_text())["results"]
    return code, result["checks"], err


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # runs write .assay/ under the working directory


# --------------------------------------------------------------------------- plugin ops, end to end


def test_a_plugin_op_passes_and_fails_through_assay_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = {"op": "myorg/ends-with", "value": "!"}
    code, checks, _ = gate(tmp_path, [spec, "myorg/ends-with:!"], "hello!", capsys)
    assert code == 0
    assert [(c["op"], c["passed"]) for c in checks] == [
        ("myorg/ends-with", True),
        ("myorg/ends-with", True),
    ]

    _, checks, _ = gate(tmp_path, [spec], "hello?", capsys)
    assert checks[0]["passed"] is False
    assert checks[0]["reason"] == "output ends with '?', not '!'"  # the plugin's own reason


def test_a_negated_plugin_op_uses_the_common_negation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = {"op": "not-myorg/ends-with", "value": "!"}
    _, checks, _ = gate(tmp_path, [spec], "hello?", capsys)
    assert (checks[0]["op"], checks[0]["passed"]) == ("not-myorg/ends-with", True)

    _, checks, _ = gate(tmp_path, [spec], "hello!", capsys)
    assert checks[0]["passed"] is False
    assert checks[0]["reason"] == "output satisfies 'myorg/ends-with', which this assert forbids"
    assert checks[0]["evidence"] == {"reason": "negated"}


@pytest.mark.parametrize("op", ["myorg/explodes", "not-myorg/explodes"])
def test_a_plugin_that_raises_is_a_failed_check_naming_it(
    op: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, checks, _ = gate(tmp_path, [op, "contains:hello"], "hello", capsys)
    assert code == 0  # the run completes: one failed check, not a crash
    assert checks[0]["passed"] is False  # negated or not: a broken plugin never passes
    assert checks[0]["reason"] == "plugin op 'myorg/explodes' raised RuntimeError: kaboom"
    assert checks[0]["evidence"] == {"reason": "plugin_raised", "plugin": "myorg/explodes"}
    assert checks[1]["passed"] is True


@pytest.mark.parametrize("op", ["myorg/bad-result", "not-myorg/bad-result"])
def test_a_plugin_returning_a_non_verdict_fails_closed(
    op: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, checks, _ = gate(tmp_path, [op], "hello", capsys)
    assert checks[0]["passed"] is False
    assert checks[0]["evidence"] == {"reason": "plugin_bad_result", "plugin": "myorg/bad-result"}
    assert "returned 'yes'" in checks[0]["reason"]


@pytest.mark.parametrize(
    ("op", "message"),
    [
        ("myorg/broken", BROKEN_MESSAGE),
        (
            "not-myorg/missing",
            "plugin 'myorg/missing' (entry point myplugin:no_such_function) cannot load:"
            " AttributeError:",
        ),
    ],
)
def test_a_plugin_that_cannot_load_is_a_run_error_naming_it(
    op: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, checks, err = gate(tmp_path, ["contains:hello", op], "hello", capsys)
    assert code == 1  # an error, not a gate verdict (2) and not a pass
    assert checks == []  # nothing recorded, so a broken install can never be baselined
    assert f"assay: error: {message}" in err


def test_a_typo_of_a_built_in_fails_closed_even_if_a_package_declares_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # assay-test-plugin declares 'contians' and 'contains' (always passing): neither is reached.
    # The typo is refused when the golden loads, naming the op it meant.
    code, checks, err = gate(tmp_path, ["contians:hello", "contains:zzz"], "hello", capsys)
    assert code == 1 and checks == []
    assert "field 'asserts[0]': unknown op 'contians': did you mean 'contains'?" in err
    code, checks, _ = gate(tmp_path, ["contains:zzz"], "hello", capsys)
    assert checks[0]["passed"] is False  # the built-in contains, not the plugin's


def test_an_unknown_namespaced_op_is_a_failed_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, checks, _ = gate(tmp_path, ["myorg/no-such-op"], "hello", capsys)
    assert checks[0]["passed"] is False
    assert checks[0]["evidence"] == {"reason": "unknown_op"}
    assert checks[0]["reason"] == (
        "unknown op 'myorg/no-such-op' (no installed plugin or registered op has that name)"
    )


def test_a_plugin_op_gets_the_value_at_path_as_text() -> None:
    spec = parse_assert({"op": "myorg/ends-with", "value": "}", "path": "/a"})
    assert run_assert(spec, OutputView('{"a": {"b": 1}}')).passed  # '{"b":1}' ends with '}'
    spec = parse_assert({"op": "myorg/ends-with", "value": "x", "flags": "i"})
    result = run_assert(spec, OutputView("x"))
    assert result.passed is False  # plugin ops take only 'value': other arguments fail closed
    assert result.reason == "unknown argument(s) ['flags'] for op 'myorg/ends-with'"


def test_a_plain_run_never_reads_entry_points(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_scan(**_: Any) -> Any:
        raise AssertionError("a built-in-only run read the entry points")

    monkeypatch.setattr(importlib.metadata, "entry_points", no_scan)
    asserts = ["contains:SELECT", "not-contains:DROP", "regex:^SELECT"]
    code, checks, err = gate(tmp_path, asserts, "SELECT 1", capsys)
    assert (code, err) == (0, "")
    assert [c["passed"] for c in checks] == [True, True, True]
    # A typo of a built-in is refused at load, still without the scan.
    code, _, err = gate(tmp_path, ["contians:x"], "SELECT 1", capsys)
    assert code == 1 and "did you mean 'contains'?" in err and "Traceback" not in err


def test_the_scan_is_read_once_per_group(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.metadata.entry_points
    groups: list[str | None] = []

    def counting(*, group: str | None = None) -> Any:
        groups.append(group)
        return real(group=group)

    monkeypatch.setattr(importlib.metadata, "entry_points", counting)
    for _ in range(3):
        assert find_op("myorg/ends-with") is not None
        assert find_op("myorg/nope") is None
    assert is_known_provider_type("myorg/upper")
    assert groups == ["assay.ops", "assay.providers"]


# --------------------------------------------------------------------------- register_op


def test_register_op_adds_a_namespaced_op_with_negation() -> None:
    register_op("mine/shouts", lambda output, value: output.isupper())
    assert run_assert(parse_assert("mine/shouts"), OutputView("HEY")).passed
    failed = run_assert(parse_assert("mine/shouts"), OutputView("hey"))
    assert (failed.passed, failed.reason) == (False, "output does not satisfy 'mine/shouts'")
    assert run_assert(parse_assert("not-mine/shouts"), OutputView("hey")).passed
    assert not run_assert(parse_assert("not-mine/shouts"), OutputView("HEY")).passed
    assert assay.register_op is register_op


def test_register_op_keeps_known_ops_live() -> None:
    # KNOWN_OPS is the names as of import; known_ops() is live and includes registered ops.
    before = known_ops()
    assert "mine/shouts" not in before
    register_op("mine/shouts", lambda output, value: True)
    assert "mine/shouts" in known_ops()
    assert known_ops() == sorted([*before, "mine/shouts"])
    assert "mine/shouts" not in KNOWN_OPS


def test_the_built_in_table_is_read_only() -> None:
    with pytest.raises(TypeError):
        OPS["mine/x"] = OPS["contains"]  # type: ignore[index]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("contains", "is a built-in op"),
        ("not-contains", "is a built-in op"),
        ("shouts", "must be namespaced like 'pkg/name'"),
        ("a/b/c", "must be namespaced"),
        ("mine/has:colon", "must be namespaced"),
        ("not-mine/x", "cannot start with 'not-'"),
    ],
)
def test_register_op_rejects_bad_names(name: str, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        register_op(name, lambda output, value: True)


def test_register_op_rejects_a_duplicate_and_a_non_callable() -> None:
    register_op("mine/once", lambda output, value: True)
    with pytest.raises(ValidationError, match="already registered"):
        register_op("mine/once", lambda output, value: False)
    with pytest.raises(ValidationError, match="must be callable"):
        register_op("mine/not-a-function", "nope")  # type: ignore[arg-type]


def test_a_registered_op_comes_before_an_installed_one() -> None:
    register_op("myorg/ends-with", lambda output, value: False)
    spec = parse_assert({"op": "myorg/ends-with", "value": "!"})
    assert run_assert(spec, OutputView("hi!")).passed is False


def test_plugin_ops_are_scorer_types() -> None:
    definition = {"type": "myorg/ends-with", "value": "!"}
    assert evaluate_deterministic_scorer(definition, {"output": "hi!"})["passed"] is True
    failed = evaluate_deterministic_scorer(definition, {"output": "hi?"})
    assert failed["passed"] is False
    assert failed["evidence"]["message"] == "output ends with '?', not '!'"
    with pytest.raises(ValidationError, match="unknown scorer type 'myorg/nope'"):
        evaluate_deterministic_scorer({"type": "myorg/nope"}, {"output": "x"})


# --------------------------------------------------------------------------- loading


@pytest.mark.parametrize(
    ("source", "error"),
    [
        ("raise RuntimeError('no config')\n", "RuntimeError: no config"),
        ("def check(:\n", "SyntaxError:"),
        ("import sys\nsys.exit(3)\n", "SystemExit: 3"),
        ("check = 42\n", "is not callable (it is a int)"),
    ],
)
def test_anything_that_breaks_a_load_names_the_plugin(
    source: str, error: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = f"assay_test_broken_{abs(hash(source))}"
    (tmp_path / f"{module}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    fake_entry_points(monkeypatch, "assay.ops", [("acme/check", f"{module}:check")])
    with pytest.raises(PluginError) as caught:
        run_assert(parse_assert("acme/check"), OutputView("x"))
    assert str(caught.value).startswith(f"plugin 'acme/check' (entry point {module}:check) ")
    assert error in str(caught.value)
    sys.modules.pop(module, None)


def test_a_name_declared_twice_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_entry_points(
        monkeypatch,
        "assay.ops",
        [("acme/dup", "myplugin:ends_with"), ("acme/dup", "myplugin:explodes")],
    )
    with pytest.raises(PluginError, match="'acme/dup' is declared by more than one entry point"):
        find_op("acme/dup")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("myorg/ends-with", True),
        ("a/b", True),
        ("My.Org_1/x-y.z", True),
        ("contains", False),
        ("a/b/c", False),
        ("/b", False),
        ("a/", False),
        ("a/b:c", False),
        ("a /b", False),
        ("-a/b", False),
        (None, False),
        (3, False),
    ],
)
def test_plugin_names_are_namespaced(name: object, expected: bool) -> None:
    assert plugins.is_plugin_name(name) is expected


def test_listing_and_loading_by_group() -> None:
    assert plugins.plugin_names("assay.ops") == (
        "myorg/bad-result",
        "myorg/broken",
        "myorg/ends-with",
        "myorg/explodes",
        "myorg/missing",
    )  # 'contains' and 'contians' are unreachable, so they are not listed
    assert plugins.has_plugin("assay.providers", "myorg/upper")
    assert not plugins.has_plugin("assay.providers", "upper")
    with pytest.raises(PluginError, match=r"no installed plugin 'myorg/nope' .*myorg/count"):
        plugins.load_plugin("assay.formats", "myorg/nope")
    with pytest.raises(PluginError, match="is not a plugin name"):
        plugins.load_plugin("assay.formats", "text")


# --------------------------------------------------------------------------- provider types


def write_candidates(tmp_path: Path, provider: dict[str, Any]) -> Path:
    path = tmp_path / "candidates.yaml"
    document = {"provider": provider, "candidates": [{"id": "loud", "prompt": "{{ input }}!"}]}
    path.write_text(json.dumps(document))  # JSON is YAML
    return path


def test_a_plugin_provider_type_produces_outputs_through_assay_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    goldens = tmp_path / "goldens.jsonl"
    golden = {"id": "g", "input": "hello world", "asserts": ["equals:HELLO WORLD!"]}
    goldens.write_text(json.dumps(golden) + "\n")
    candidates = write_candidates(tmp_path, {"type": "myorg/upper", "model": "m"})
    report = tmp_path / "report.json"
    args = ["eval", goldens, "--candidates", candidates, "--json", "--output", report, "--no-cache"]
    code, err = run_main(args, capsys)
    assert code == 0, err
    (result,) = json.loads(report.read_text())["results"]
    assert (result["candidate"], result["status"]) == ("loud", "pass")


def test_provider_types_are_validated_against_built_ins_and_plugins() -> None:
    assert provider_config({"type": "myorg/upper"}, "c.yaml", "provider").type == "myorg/upper"
    for bad in ("upper", "myorg/nope"):
        with pytest.raises(ConfigError, match="provider type must be one of openai") as caught:
            provider_config({"type": bad}, "c.yaml", "provider")
        assert caught.value.field == "provider.type"
    assert all(is_known_provider_type(name) for name in PROVIDER_TYPES)


def test_a_plugin_provider_is_held_to_the_provider_contract(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_entry_points(
        monkeypatch,
        "assay.providers",
        [
            ("acme/raises", f"{__name__}:RaisingProvider"),
            ("acme/bad-start", f"{__name__}:failing_factory"),
            ("acme/no-complete", f"{__name__}:failing_factory_result"),
        ],
    )
    provider = make_provider(ProviderConfig(type="acme/raises"))
    with pytest.raises(ProviderError, match=r"plugin 'acme/raises' .* raised KeyError") as caught:
        asyncio.run(provider.complete("x"))
    assert caught.value.retryable is False
    with pytest.raises(PluginError, match=r"plugin 'acme/bad-start' .* cannot start: OSError"):
        make_provider(ProviderConfig(type="acme/bad-start"))
    with pytest.raises(PluginError, match=r"which has no complete\(\)"):
        make_provider(ProviderConfig(type="acme/no-complete"))
    with pytest.raises(ValueError, match="unknown provider type 'acme/nope'"):
        make_provider(ProviderConfig(type="acme/nope"))


class RaisingProvider:
    def __init__(self, config: ProviderConfig):
        self.config = config

    async def complete(self, prompt: str) -> Completion:
        raise KeyError("no such model")

    async def aclose(self) -> None:
        return None


def failing_factory(config: ProviderConfig) -> Any:
    raise OSError("socket refused")


def failing_factory_result(config: ProviderConfig) -> Any:
    return object()


# --------------------------------------------------------------------------- similarity, formats


def test_a_plugin_similarity_backend() -> None:
    assert BUILTIN_BACKENDS == ("none", "difflib", "rapidfuzz", "embedding")
    assert is_known_backend("myorg/same-length")
    assert not is_known_backend("same-length")
    assert not is_known_backend("myorg/nope")
    backend = get_backend("myorg/same-length")
    assert backend is not None
    assert backend("abcd", "wxyz") == 1.0
    assert backend("ab", "abcd") == 0.5
    with pytest.raises(ConfigError, match="unknown similarity backend 'myorg/nope'"):
        get_backend("myorg/nope")


def nan_backend() -> Any:
    return lambda a, b: float("nan")


def test_a_plugin_similarity_score_must_be_a_number(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_entry_points(monkeypatch, "assay.similarity", [("acme/nan", f"{__name__}:nan_backend")])
    backend = get_backend("acme/nan")
    assert backend is not None
    with pytest.raises(PluginError, match=r"similarity plugin 'acme/nan' .* returned nan"):
        backend("a", "b")


def test_a_format_plugin_renders_a_document() -> None:
    document = {"results": [{}, {}]}
    assert render_plugin_format("myorg/count", document) == "none: 2 results\n"
    context = RenderContext(view="agent")
    assert render_plugin_format("myorg/count", document, context) == "agent: 2 results\n"


def bad_format(document: Any, context: Any) -> Any:
    return b"bytes"


def test_a_format_plugin_must_return_text(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_entry_points(monkeypatch, "assay.formats", [("acme/bytes", f"{__name__}:bad_format")])
    with pytest.raises(PluginError, match=r"format plugin 'acme/bytes' .* returned a bytes"):
        render_plugin_format("acme/bytes", {})
