"""The python provider written as promptfoo writes one: ``file://provider.py`` (``call_api``) or
``file://provider.py:fn``, called as ``fn(prompt, options, context)`` and returning promptfoo's
``{output, error, tokenUsage}`` (promptfoo's src/providers/pythonCompletion.ts and its python
provider docs), through the runner and through ``assay eval``; the ``module:function`` form
keeps its own convention."""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.errors import ConfigError
from assay.models._candidates_file import load_candidates_file
from assay.models._runner import Call, Outcome, RunStats, run_calls
from assay.models.providers import ProviderConfig
from tests.helpers.cli import run_cli

PROVIDER = """
import json

def call_api(prompt, options, context):
    config = options["config"]
    return {
        "output": f"{config.get('prefix', '')}{prompt} for {context['vars'].get('user')}",
        "tokenUsage": {"prompt": 4, "completion": 6, "total": 10},
    }

def shows(prompt, options, context):
    return {"output": {"options": options, "context": context}}

async def later(prompt, options, context):
    return {"output": prompt[::-1], "finishReason": "stop"}

def fails(prompt, options, context):
    return {"output": "", "error": "the model is\\nunavailable"}

def shapeless(prompt, options, context):
    return "just text"

def no_output(prompt, options, context):
    return {"output": None}

def mutates(prompt, options, context):
    context["vars"]["user"] = "changed"
    return {"output": "ok"}
"""


@pytest.fixture(autouse=True)
def forget_project_modules(tmp_path: Path) -> Iterator[None]:
    """Modules the tests' providers imported from their folder leave with the test (another
    test's project may have a module of the same name)."""
    yield
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str) and Path(file).resolve().is_relative_to(tmp_path.resolve()):
            del sys.modules[name]


def write(root: Path, text: str = PROVIDER, name: str = "provider.py") -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))


def run(*calls: Call, root: Path) -> tuple[list[Outcome], RunStats]:
    return asyncio.run(run_calls(calls, cache=None, max_concurrency=4, root=root))


def call(config: ProviderConfig, prompt: str = "hello", **vars_: Any) -> Call:
    context = {"id": "g1", "tier": "standard", "input": "x", "vars": vars_}
    return Call("cand", "g1", 0, prompt, config, context=context)


def python(function: str, config: dict[str, Any] | None = None) -> ProviderConfig:
    text = None if config is None else json.dumps(config, sort_keys=True, separators=(",", ":"))
    return ProviderConfig(type="python", function=function, config=text)


def test_call_api_is_the_default_function_and_gets_config_and_vars(tmp_path: Path) -> None:
    write(tmp_path)
    [outcome], stats = run(
        call(python("file://provider.py", {"prefix": "> "}), user="ada"), root=tmp_path
    )
    assert outcome.error is None and outcome.completion is not None
    assert outcome.completion.text == "> hello for ada"
    assert (stats.input_tokens, stats.output_tokens) == (4, 6)


def test_options_and_context_are_promptfoos(tmp_path: Path) -> None:
    write(tmp_path)
    [outcome], _ = run(
        call(python("file://provider.py:shows", {"k": 1}), user="ada"), root=tmp_path
    )
    assert outcome.completion is not None
    seen = json.loads(outcome.completion.text)  # a dict output is kept as its JSON
    assert seen["options"] == {
        "id": "file://provider.py:shows",
        "config": {"k": 1, "basePath": str(tmp_path)},
    }
    assert seen["context"]["vars"] == {"user": "ada"}
    assert seen["context"]["test"] == {"vars": {"user": "ada"}}
    assert (seen["context"]["input"], seen["context"]["id"]) == ("x", "g1")


def test_an_async_function_and_its_finish_reason(tmp_path: Path) -> None:
    write(tmp_path)
    [outcome], _ = run(call(python("file://provider.py:later")), root=tmp_path)
    assert outcome.completion is not None
    assert (outcome.completion.text, outcome.completion.finish_reason) == ("olleh", "stop")


@pytest.mark.parametrize(
    ("function", "error"),
    [
        ("fails", "the function returned the error: the model is unavailable"),
        (
            "shapeless",
            "the function must return a dict with an 'output' or an 'error' (promptfoo's "
            "ProviderResponse), not a str",
        ),
        ("no_output", "the function returned no output"),
    ],
)
def test_an_error_or_a_bad_shape_is_the_calls_error(
    tmp_path: Path, function: str, error: str
) -> None:
    write(tmp_path)
    [outcome], _ = run(call(python(f"file://provider.py:{function}")), root=tmp_path)
    assert outcome.error == f"{error} after 1 attempt(s)"


def test_the_function_gets_a_copy_of_the_vars(tmp_path: Path) -> None:
    write(tmp_path)
    the_call = call(python("file://provider.py:mutates"), user="ada")
    run(the_call, root=tmp_path)
    assert the_call.context is not None and the_call.context["vars"] == {"user": "ada"}


def test_a_module_beside_the_file_is_found_as_promptfoo_finds_it(tmp_path: Path) -> None:
    write(tmp_path, "WORD = 'beside'\n", "app/near.py")
    write(
        tmp_path,
        "import near\ndef call_api(p, o, c):\n    return {'output': near.WORD}\n",
        "app/p2.py",
    )
    [outcome], _ = run(call(python("file://app/p2.py")), root=tmp_path)
    assert outcome.completion is not None and outcome.completion.text == "beside"


def test_a_file_in_a_folder_and_its_sibling_module(tmp_path: Path) -> None:
    write(tmp_path, "WORD = 'from helper'\n", "pf_words.py")
    write(
        tmp_path,
        "import pf_words\ndef call_api(p, o, c):\n    return {'output': pf_words.WORD}\n",
        "app/prov.py",
    )
    [outcome], _ = run(call(python("file://app/prov.py")), root=tmp_path)
    assert outcome.completion is not None and outcome.completion.text == "from helper"


# --------------------------------------------------------------------------- through assay eval


def project(root: Path, provider: dict[str, Any]) -> list[str]:
    goldens = [
        {"id": "ada", "input": "same", "vars": {"user": "ada"}, "asserts": ["contains:same"]},
        {"id": "bob", "input": "same", "vars": {"user": "bob"}, "asserts": ["contains:same"]},
    ]
    (root / "goldens.jsonl").write_text("".join(json.dumps(g) + "\n" for g in goldens))
    document = {"provider": provider, "candidates": [{"id": "a", "prompt": "{{ input }}"}]}
    (root / "cands.yaml").write_text(json.dumps(document))
    return ["eval", "goldens.jsonl", "--candidates", "cands.yaml", "--json"]


def test_eval_calls_it_per_golden_and_keys_the_cache_by_vars_and_code(tmp_path: Path) -> None:
    write(tmp_path)
    args = project(tmp_path, {"type": "python", "function": "file://provider.py"})
    code, out, err = run_cli(args, tmp_path)
    assert code == 0, err
    first = json.loads(out)
    assert {r["id"]: r["output"] for r in first["results"]} == {
        "ada": "same for ada",
        "bob": "same for bob",
    }
    code, out, _ = run_cli(args, tmp_path)
    assert json.loads(out)["summary"]["model_calls"]["cache_hits"] == 2
    write(tmp_path, PROVIDER.replace("for {context", "by {context"))  # the code changed
    code, out, _ = run_cli(args, tmp_path)
    again = json.loads(out)
    assert again["summary"]["model_calls"]["made"] == 2
    assert {r["output"] for r in again["results"]} == {"same by ada", "same by bob"}


def test_the_module_form_keeps_its_convention(tmp_path: Path) -> None:
    write(tmp_path, "def answer(prompt):\n    return {'text': prompt.upper()}\n", "mine.py")
    args = project(tmp_path, {"type": "python", "function": "mine:answer"})
    code, out, err = run_cli([*args, "--no-cache"], tmp_path)
    assert code == 0, err
    assert {r["output"] for r in json.loads(out)["results"]} == {"SAME"}


@pytest.mark.parametrize(
    ("provider", "field", "words"),
    [
        ({"type": "python", "function": "file://nope.py"}, "function", "no file"),
        (
            {"type": "python", "function": "file://provider.py:absent"},
            "function",
            "has no 'absent'",
        ),
        ({"type": "python", "function": "file://provider.txt"}, "function", "must name a .py file"),
    ],
)
def test_a_provider_that_cannot_start_is_one_line_naming_the_field(
    tmp_path: Path, provider: dict[str, Any], field: str, words: str
) -> None:
    write(tmp_path)
    code, _, err = run_cli(project(tmp_path, provider), tmp_path)
    assert code == 1 and "Traceback" not in err
    [line] = err.strip().splitlines()
    assert "cands.yaml" in line and f"provider.{field}" in line and words in line


def test_config_is_only_for_the_promptfoo_form(tmp_path: Path) -> None:
    path = tmp_path / "cands.yaml"
    provider = {"type": "python", "function": "mine:answer", "config": {"k": 1}}
    path.write_text(json.dumps({"provider": provider, "candidates": [{"id": "a", "prompt": "x"}]}))
    with pytest.raises(ConfigError) as caught:
        load_candidates_file(path)
    assert caught.value.field == "provider.config"
    assert "does not support 'config'" in caught.value.message
