"""``assay import promptfoo`` loses nothing silently (issue 28, items 3 and 5): each construct
is converted as promptfoo reads it or listed by name, and every suite it writes loads.

promptfoo's behaviour is read from its source (github promptfoo/promptfoo, main):
src/csv.ts (``testCaseFromCsvRow``, ``assertionFromString``), src/evaluatorHelpers.ts
(``renderPrompt``, ``resolveVariables``), src/util/file.ts (``maybeLoadFromExternalFile``),
src/providers/registry.ts (the provider ids), src/util/transform.ts (transforms).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.importers.promptfoo import PromptfooConfigError, convert
from tests.helpers.cli import run_cli


def write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return folder / "promptfooconfig.yaml"


def lines(conversion: Any) -> list[str]:
    return [s.line() for s in conversion.skipped]


CONFIG = "prompts: ['Say {{q}}']\nproviders: [echo]\n"


# -- CSV ---------------------------------------------------------------------------------------


def test_csv_expected_cells_are_trimmed_as_promptfoo_trims_them(tmp_path: Path) -> None:
    # src/csv.ts: applyReservedColumn calls assertionFromString(value.trim()), and
    # parseRegexAssertion trims the value (value?.trim?.()), array items one by one.
    csv = (
        "q,__expected1,__expected2,__expected3,__expected4\n"
        'hi,contains: algorithm ,"  icontains-any: a , b","  plain answer  ",equals:  x  \n'
    )
    config = write(
        tmp_path, {"promptfooconfig.yaml": CONFIG + "tests: file://t.csv\n", "t.csv": csv}
    )
    asserts = convert(config).goldens[0]["asserts"]
    assert asserts == [
        {"op": "contains", "value": "algorithm"},
        {"op": "regex", "value": "a|b", "flags": "is"},
        # the fallback: equals with the trimmed cell, exact as promptfoo's equals
        {"op": "equals", "value": "plain answer", "exact": True},
        {"op": "equals", "value": "x", "exact": True},
    ]


def test_csv_columns_metric_threshold_config_metadata_and_underscored_vars(
    tmp_path: Path,
) -> None:
    csv = (
        " q ,__expected,__metric,__config:__expected:threshold,__metadata:tags[],__flag\n"
        'hi,levenshtein:hello,polite,3,"a,b\\,c",yes\n'
    )
    config = write(
        tmp_path, {"promptfooconfig.yaml": CONFIG + "tests: file://t.csv\n", "t.csv": csv}
    )
    golden = convert(config).goldens[0]
    # header names trimmed; a __name column promptfoo does not reserve is a var
    assert golden["vars"] == {"q": "hi", "__flag": "yes"}
    assert golden["asserts"] == [
        {"op": "levenshtein", "value": "hello", "threshold": 3.0, "name": "polite"}
    ]
    assert golden["metadata"] == {"tags": ["a", "b,c"]}


@pytest.mark.parametrize(
    ("cell", "line"),
    [
        ("is-xml", "test 1 (Row #1): is-xml: assay has no equivalent assert"),
        ("contains-sql", "test 1 (Row #1): contains-sql: assay has no equivalent assert"),
        ("is-refusal", "test 1 (Row #1): is-refusal: assay has no equivalent assert"),
        (
            "webhook:https://x.test/hook",
            "test 1 (Row #1): webhook: webhook asserts are not converted",
        ),
        ("not-is-html", "test 1 (Row #1): not-is-html: assay has no equivalent assert"),
    ],
)
def test_csv_types_assay_lacks_are_listed_by_name_never_equals(
    tmp_path: Path, cell: str, line: str
) -> None:
    config = write(
        tmp_path,
        {
            "promptfooconfig.yaml": CONFIG + "tests: file://t.csv\n",
            "t.csv": f"q,__expected\nhi,{cell}\n",
        },
    )
    conversion = convert(config)
    assert "asserts" not in conversion.goldens[0]
    assert lines(conversion) == [line]


def test_a_csv_python_file_assert_is_the_python_op_with_its_file_copied(tmp_path: Path) -> None:
    files = {
        "promptfooconfig.yaml": CONFIG + "tests: file://t.csv\n",
        "t.csv": "q,__expected\nhi,file://checks/grade.py:check\n",
        "checks/grade.py": "def check(output, context):\n    return True\n",
    }
    conversion = convert(write(tmp_path, files))
    assert conversion.goldens[0]["asserts"] == [
        {"op": "python", "value": "file://checks/grade.py:check"}
    ]
    assert conversion.files == {"checks/grade.py": files["checks/grade.py"]}
    assert conversion.skipped == []


# -- vars ----------------------------------------------------------------------------------------


def test_vars_that_reference_vars_are_resolved_as_promptfoo_renders_them(tmp_path: Path) -> None:
    # resolveVariables: each var's first {{ name }} of an existing var, up to 5 rounds; a
    # default var sees the test's vars.
    config = write(
        tmp_path,
        {
            "promptfooconfig.yaml": "prompts: ['{{sentence}}']\nproviders: [echo]\n"
            "defaultTest:\n  vars: {sentence: 'tweet about {{topic}}'}\n"
            "tests:\n  - vars: {topic: 'cats in {{place}}', place: Paris}\n"
            "    assert: [{type: icontains, value: '{{sentence}}'}]\n",
        },
    )
    golden = convert(config).goldens[0]
    assert golden["vars"]["sentence"] == "tweet about cats in Paris"
    assert golden["vars"]["topic"] == "cats in Paris"
    # the assert value renders with the resolved vars, as promptfoo's
    assert golden["asserts"] == [{"op": "icontains", "value": "tweet about cats in Paris"}]


def test_a_var_referencing_a_missing_var_is_listed_not_left_as_a_template(tmp_path: Path) -> None:
    config = write(
        tmp_path,
        {"promptfooconfig.yaml": CONFIG + "tests: [{vars: {q: 'about {{nothing}}'}}]\n"},
    )
    assert lines(convert(config)) == [
        "test 1: tests[0].vars.q: a var that is a template: its templated value does not "
        "render: 'nothing' is undefined"
    ]


def test_file_vars_are_trimmed_yaml_is_json_and_one_trailing_newline_goes(tmp_path: Path) -> None:
    # renderPrompt: readFileSync(...).trim(); a YAML file is JSON.stringify(yaml.load(...));
    # then `vars[key].replace(/\n$/, '')` on every text var.
    files = {
        "promptfooconfig.yaml": CONFIG
        + "tests:\n  - vars:\n      q: file://doc.txt\n      data: file://data.yaml\n"
        "      block: |\n        two lines\n        here\n",
        "doc.txt": "\n  The text.  \n\n",
        "data.yaml": "a: 1\nb: [x, y]\n",
    }
    golden = convert(write(tmp_path, files)).goldens[0]
    assert golden["vars"]["q"] == "The text."
    assert golden["vars"]["data"] == '{"a":1,"b":["x","y"]}'
    assert golden["vars"]["block"] == "two lines\nhere"


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("photo.png", "an image"),
        ("clip.mp4", "a video"),
        ("talk.wav", "an audio file"),
        ("r.pdf", "a PDF"),
    ],
)
def test_binary_vars_are_one_line_naming_them(tmp_path: Path, name: str, kind: str) -> None:
    files = {"promptfooconfig.yaml": CONFIG + f"tests: [{{vars: {{q: 'file://{name}'}}}}]\n"}
    assert lines(convert(write(tmp_path, files))) == [
        f"test 1: tests[0].vars.q: a binary var ({kind}: promptfoo sends base64 or its text) "
        "is not converted"
    ]


# -- file:// and globs ------------------------------------------------------------------------


def test_file_refs_in_provider_config_are_loaded(tmp_path: Path) -> None:
    schema = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}}
    files = {
        "promptfooconfig.yaml": "prompts: [hi]\n"
        "providers:\n  - id: openai:gpt-4o-mini\n    config: {response_format: file://schema.json}\n"
        "tests: [{vars: {}}]\n",
        "schema.json": json.dumps(schema),
    }
    conversion = convert(write(tmp_path, files))
    assert conversion.candidates["provider"] == {
        "type": "openai",
        "model": "gpt-4o-mini",
        "response_format": schema,
    }
    assert conversion.skipped == []


def test_globs_expand_in_path_order_not_reported_missing(tmp_path: Path) -> None:
    files = {
        "promptfooconfig.yaml": "prompts: ['file://prompts/p*.txt']\nproviders: [echo]\n"
        "tests: file://cases/*.yaml\n",
        "prompts/p2.txt": "Second {{q}}",
        "prompts/p1.txt": "First {{q}}\n---\nAlso first {{q}}",
        "cases/b.yaml": "- vars: {q: b}\n",
        "cases/a.yaml": "- vars: {q: a}\n- vars: {q: 'file://docs/*.md'}\n",
        "docs/y.md": "Y\n",
        "docs/x.md": "X\n",
    }
    conversion = convert(write(tmp_path, files))
    assert [c["prompt"] for c in conversion.candidates["candidates"]] == [
        "First {{q}}",
        "Also first {{q}}",
        "Second {{q}}",
    ]
    # a var glob is one value per file (generateVarCombinations), each file's text trimmed
    assert [g["vars"]["q"] for g in conversion.goldens] == ["a", "X", "Y", "b"]
    assert conversion.skipped == []


def test_a_glob_matching_nothing_is_one_error_naming_the_pattern(tmp_path: Path) -> None:
    config = write(tmp_path, {"promptfooconfig.yaml": "prompts: ['file://p*.txt']\ntests: []\n"})
    with pytest.raises(PromptfooConfigError, match=r"file://p\*\.txt: no file matches"):
        convert(config)


# -- config shapes -------------------------------------------------------------------------------


def test_targets_is_providers(tmp_path: Path) -> None:
    config = write(
        tmp_path, {"promptfooconfig.yaml": "prompts: [hi]\ntargets: [openai:gpt-4o]\ntests: [{}]\n"}
    )
    conversion = convert(config)
    assert conversion.candidates["provider"] == {"type": "openai", "model": "gpt-4o"}
    assert conversion.skipped == []


def test_a_javascript_prompt_function_is_named_not_its_config(tmp_path: Path) -> None:
    files = {
        "promptfooconfig.yaml": "prompts:\n  - {id: 'file://prompt.js:build', config: {t: 1}}\n"
        "  - hi {{q}}\nproviders: [echo]\ntests: [{vars: {q: x}}]\n",
        "prompt.js": "module.exports.build = () => 'x';\n",
    }
    conversion = convert(write(tmp_path, files))
    assert lines(conversion) == [
        "config: prompts[0] (file://prompt.js:build): a JavaScript prompt function is not converted"
    ]
    assert [c["prompt"] for c in conversion.candidates["candidates"]] == ["hi {{q}}"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("redteam: {plugins: [harmful]}\n", "field 'redteam': red teaming (redteam:)"),
        ("scenarios: [{config: [{vars: {}}]}]\n", "field 'scenarios': scenarios (scenarios:)"),
    ],
)
def test_a_config_of_an_unsupported_feature_names_it_not_tests(
    tmp_path: Path, extra: str, message: str
) -> None:
    write(tmp_path, {"promptfooconfig.yaml": "targets: [echo]\nprompts: [hi]\n" + extra})
    code, _, err = run_cli(["import", "promptfoo", "promptfooconfig.yaml"], tmp_path)
    assert code == 1 and err.count("\n") == 1, err
    assert message in err and "'tests'" not in err


@pytest.mark.parametrize(
    ("source", "why"),
    [
        ("file://generate.py:tests", "tests made by a script (a test generator) are not converted"),
        ("https://example.com/tests.csv", "remote test sources (https://) are not converted"),
        (
            "https://docs.google.com/spreadsheets/d/abc/edit",
            "Google Sheets test sources are not converted",
        ),
        ("huggingface://datasets/org/set", "Hugging Face dataset test sources are not converted"),
    ],
)
def test_test_sources_assay_does_not_read_are_one_line_each(
    tmp_path: Path, source: str, why: str
) -> None:
    config = write(
        tmp_path,
        {"promptfooconfig.yaml": CONFIG + f"tests:\n  - '{source}'\n  - {{vars: {{q: a}}}}\n"},
    )
    conversion = convert(config)
    assert lines(conversion) == [f"config: tests[0] ({source}): {why}"]
    assert len(conversion.goldens) == 1
    # with nothing else to convert, the error says which source it was
    write(tmp_path, {"promptfooconfig.yaml": CONFIG + f"tests: '{source}'\n"})
    with pytest.raises(PromptfooConfigError, match="no test converts"):
        convert(config)


def test_redteam_next_to_tests_is_listed_and_the_tests_convert(tmp_path: Path) -> None:
    config = write(tmp_path, {"promptfooconfig.yaml": CONFIG + "redteam: {}\ntests: [{}]\n"})
    assert lines(convert(config)) == [
        "config: redteam: red teaming (redteam:) generates its tests at run time: not converted"
    ]


# -- values --------------------------------------------------------------------------------------


def test_numbers_in_list_values_are_text_so_the_golden_loads(tmp_path: Path) -> None:
    config = write(
        tmp_path,
        {
            "promptfooconfig.yaml": CONFIG + "tests:\n  - vars: {q: x}\n    assert:\n"
            "      - {type: contains-any, value: [-3.625, '-29/8', 2.0, true]}\n"
            "      - {type: contains, value: 1.0}\n",
        },
    )
    assert convert(config).goldens[0]["asserts"] == [
        # promptfoo compares String(value): String(2.0) is "2", String(true) "true"
        {"op": "contains-any", "value": ["-3.625", "-29/8", "2", "true"]},
        {"op": "contains", "value": "1"},
    ]
    code, _, err = run_cli(["import", "promptfoo", "promptfooconfig.yaml", "-o", "out"], tmp_path)
    assert code == 0, err
    from assay.goldens._loader import iter_goldens

    [golden] = list(iter_goldens(tmp_path / "out" / "goldens"))
    assert golden.id == "promptfooconfig-1"


# -- code asserts and transforms -----------------------------------------------------------------


def test_code_asserts_and_transforms_keep_their_code_and_copy_their_files(tmp_path: Path) -> None:
    files = {
        "promptfooconfig.yaml": "prompts: [hi]\n"
        "providers:\n  - id: echo\n"
        "defaultTest:\n  options: {transform: 'file://lib/up.js:upper'}\n"
        "tests:\n"
        "  - options: {postprocess: 'output.trim()'}\n"
        "    assert:\n"
        "      - {type: javascript, value: 'output.length > 1', threshold: 0.5}\n"
        "      - {type: not-python, value: 'file://lib/check.py'}\n"
        "      - {type: contains, value: HI, transform: 'file://lib/t.py:get'}\n",
        "lib/up.js": "module.exports.upper = (o) => o.toUpperCase();\n",
        "lib/check.py": "def get_assert(output, context):\n    return False\n",
        "lib/t.py": "def get(output, context):\n    return output\n",
    }
    conversion = convert(write(tmp_path, files))
    assert conversion.skipped == []
    assert conversion.defaults == {"transform": {"javascript": "file://lib/up.js:upper"}}
    golden = conversion.goldens[0]
    assert golden["transform"] == {"javascript": "output.trim()"}
    assert golden["asserts"] == [
        {"op": "javascript", "value": "output.length > 1", "threshold": 0.5},
        {"op": "not-python", "value": "file://lib/check.py"},
        {"op": "contains", "value": "HI", "transform": {"python": "file://lib/t.py:get"}},
    ]
    assert sorted(conversion.files) == ["lib/check.py", "lib/t.py", "lib/up.js"]
    code, out, err = run_cli(["import", "promptfoo", "promptfooconfig.yaml", "-o", "out"], tmp_path)
    assert code == 0, err
    assert (tmp_path / "out/lib/up.js").read_text("utf-8") == files["lib/up.js"]
    assert "scripts copied: lib/check.py, lib/t.py, lib/up.js" in out


def test_a_provider_transform_becomes_the_defaults_when_it_is_the_only_one(tmp_path: Path) -> None:
    files = {
        "promptfooconfig.yaml": "prompts: [hi]\n"
        "providers: [{id: echo, transform: 'output.toUpperCase()'}]\ntests: [{}]\n"
    }
    conversion = convert(write(tmp_path, files))
    assert conversion.defaults == {"transform": {"javascript": "output.toUpperCase()"}}
    # with a test transform of its own, the two cannot both be kept: listed
    files["promptfooconfig.yaml"] += "  - options: {transform: 'output'}\n"
    files["promptfooconfig.yaml"] = files["promptfooconfig.yaml"].replace(
        "tests: [{}]\n", "tests:\n"
    )
    conversion = convert(write(tmp_path, files))
    assert [s.what for s in conversion.skipped] == ["providers[0].transform"]


def test_what_still_has_no_equivalent_is_listed(tmp_path: Path) -> None:
    config = write(
        tmp_path,
        {
            "promptfooconfig.yaml": CONFIG + "tests:\n  - options: {transformVars: 'vars'}\n"
            "    assert: [{type: contains, value: a, contextTransform: 'x'}]\n",
        },
    )
    assert lines(convert(config)) == [
        "test 1: contains (contextTransform): not converted: the assert is left out",
        "test 1: options.transformVars: var transforms (transformVars) are not converted",
    ]


# -- providers -----------------------------------------------------------------------------------

PROVIDERS: list[tuple[str, str, dict[str, Any]]] = [
    ("openai:chat:gpt-4o", "{}", {"type": "openai", "model": "gpt-4o"}),
    (
        "openai:gpt-4o",
        "{apiBaseUrl: 'http://x/v1', apiKeyEnvar: MY_KEY, temperature: 0.2}",
        {
            "type": "openai",
            "model": "gpt-4o",
            "base_url": "http://x/v1",
            "api_key_env": "MY_KEY",
            "temperature": 0.2,
        },
    ),
    (
        "anthropic:messages:claude-3-5-haiku",
        "{max_tokens: 9}",
        {"type": "anthropic", "model": "claude-3-5-haiku", "max_tokens": 9},
    ),
    ("anthropic:claude-3-5-haiku", "{}", {"type": "anthropic", "model": "claude-3-5-haiku"}),
    (
        "azure:chat:my-deploy",
        "{apiHost: 'res.openai.azure.com', apiVersion: '2024-10-21'}",
        {
            "type": "azure",
            "deployment": "my-deploy",
            "base_url": "https://res.openai.azure.com",
            "api_version": "2024-10-21",
        },
    ),
    (
        "azureopenai:chat:d",
        "{apiHost: r.openai.azure.com}",
        {"type": "azure", "deployment": "d", "base_url": "https://r.openai.azure.com"},
    ),
    (
        "bedrock:converse:anthropic.claude-3-haiku-20240307-v1:0",
        "{region: us-west-2}",
        {
            "type": "bedrock",
            "model": "anthropic.claude-3-haiku-20240307-v1:0",
            "region": "us-west-2",
        },
    ),
    ("bedrock:amazon.nova-lite-v1:0", "{}", {"type": "bedrock", "model": "amazon.nova-lite-v1:0"}),
    (
        "vertex:gemini-2.0-flash",
        "{projectId: p, region: us-central1, generationConfig: {maxOutputTokens: 50}}",
        {
            "type": "vertex",
            "model": "gemini-2.0-flash",
            "project": "p",
            "region": "us-central1",
            "max_tokens": 50,
        },
    ),
    ("vertex:chat:gemini-pro", "{}", {"type": "vertex", "model": "gemini-pro"}),
    (
        "google:gemini-2.5-flash",
        "{temperature: 0}",
        {"type": "gemini", "model": "gemini-2.5-flash", "temperature": 0},
    ),
    (
        "sagemaker:my-endpoint",
        "{region: eu-west-1}",
        {"type": "sagemaker", "endpoint": "my-endpoint", "region": "eu-west-1"},
    ),
    ("sagemaker:openai:ep", "{}", {"type": "sagemaker", "endpoint": "ep", "payload": "openai"}),
    (
        "huggingface:text-generation:gpt2",
        "{max_new_tokens: 20}",
        {"type": "huggingface", "model": "gpt2", "max_tokens": 20},
    ),
    ("hf:text-generation:gpt2", "{}", {"type": "huggingface", "model": "gpt2"}),
    (
        "huggingface:chat:meta-llama/Llama-3.1-8B-Instruct",
        "{}",
        {
            "type": "openai",
            "model": "meta-llama/Llama-3.1-8B-Instruct",
            "base_url": "https://router.huggingface.co/v1",
            "api_key_env": "HF_TOKEN",
        },
    ),
    ("ollama:chat:llama3.2:1b", "{}", {"type": "ollama", "model": "llama3.2:1b"}),
    (
        "ollama:llama3.2",
        "{num_predict: 5}",
        {"type": "ollama", "model": "llama3.2", "max_tokens": 5},
    ),
    (
        "openrouter:mistralai/mistral-7b:free",
        "{}",
        {"type": "openrouter", "model": "mistralai/mistral-7b:free"},
    ),
    ("perplexity:sonar", "{}", {"type": "perplexity", "model": "sonar"}),
    ("groq:llama-3.3-70b", "{}", {"type": "groq", "model": "llama-3.3-70b"}),
    ("mistral:mistral-small-latest", "{}", {"type": "mistral", "model": "mistral-small-latest"}),
    ("cerebras:llama3.1-8b", "{}", {"type": "cerebras", "model": "llama3.1-8b"}),
    (
        "togetherai:meta-llama/Llama-3-8b",
        "{}",
        {"type": "together", "model": "meta-llama/Llama-3-8b"},
    ),
    (
        "fireworks:accounts/fireworks/models/x",
        "{}",
        {"type": "fireworks", "model": "accounts/fireworks/models/x"},
    ),
    ("deepseek:deepseek-chat", "{}", {"type": "deepseek", "model": "deepseek-chat"}),
    ("vllm:qwen", "{}", {"type": "vllm", "model": "qwen"}),
    (
        "replicate:meta/llama-3-8b:abc123",
        "{}",
        {"type": "replicate", "model": "meta/llama-3-8b:abc123"},
    ),
    (
        "https://app.test/api",
        "{method: post, headers: {Authorization: '{{env.APP_TOKEN}}', X-Team: a},"
        " body: {q: '{{prompt}}'}, transformResponse: 'json.choices[0].message.content'}",
        {
            "type": "http",
            "url": "https://app.test/api",
            "method": "POST",
            "body": {"q": "{{prompt}}"},
            "headers": {"X-Team": "a"},
            "header_env": {"Authorization": "APP_TOKEN"},
            "response_path": "choices[0].message.content",
        },
    ),
    (
        "http",
        "{url: 'http://h/x', body: '{{prompt}}'}",
        {"type": "http", "url": "http://h/x", "body": "{{prompt}}"},
    ),
    ("echo", "{}", {"type": "echo"}),
]


@pytest.mark.parametrize(("name", "config", "expected"), PROVIDERS, ids=[p[0] for p in PROVIDERS])
def test_provider_ids_map_to_assay_types(
    tmp_path: Path, name: str, config: str, expected: dict[str, Any]
) -> None:
    text = f"prompts: [hi]\nproviders: [{{id: '{name}', config: {config}}}]\ntests: [{{}}]\n"
    conversion = convert(write(tmp_path, {"promptfooconfig.yaml": text}))
    assert conversion.candidates["provider"] == expected
    assert conversion.skipped == []


def test_python_and_exec_providers(tmp_path: Path) -> None:
    files = {
        "promptfooconfig.yaml": "prompts: [hi]\n"
        "providers:\n  - {id: 'file://prov/p.py:call', config: {k: 1}}\n"
        "  - python:prov/p.py\n  - 'exec: python run.py'\n  - file://prov/p.js\n"
        "tests: [{}]\n",
        "prov/p.py": "def call(prompt, options, context):\n    return {'output': prompt}\n",
    }
    conversion = convert(write(tmp_path, files))
    # (a candidate's null clears a setting of the file's provider it does not have)
    providers = [conversion.candidates["provider"]] + [
        {k: v for k, v in c["provider"].items() if v is not None}
        for c in conversion.candidates["candidates"][1:]
    ]
    assert providers == [
        {"type": "python", "function": "file://prov/p.py:call", "config": {"k": 1}},
        {"type": "python", "function": "file://prov/p.py"},
        {"type": "command", "command": "python run.py"},
    ]
    assert conversion.files == {"prov/p.py": files["prov/p.py"]}
    assert lines(conversion) == [
        "config: providers[2] (exec:python run.py): converted to assay's command provider, which "
        "sends the prompt on stdin, not as promptfoo's first argument: check the script reads "
        "stdin",
        "config: providers[3] (file://prov/p.js): a JavaScript provider file is not converted",
    ]


def test_provider_keys_assay_lacks_are_listed_never_written(tmp_path: Path) -> None:
    text = (
        "prompts: [hi]\nproviders:\n  - id: google:gemini-2.5-pro\n"
        "    config: {apiKey: sk-secret, response_format: {type: json_object}, thinking: {}}\n"
        "tests: [{}]\n"
    )
    conversion = convert(write(tmp_path, {"promptfooconfig.yaml": text}))
    assert conversion.candidates["provider"] == {"type": "gemini", "model": "gemini-2.5-pro"}
    assert "sk-secret" not in json.dumps(conversion.candidates)
    assert lines(conversion) == [
        "config: providers[0].config.apiKey: a key written in the config is not converted: set "
        "api_key_env instead",
        "config: providers[0].config.response_format: not an assay provider setting",
        "config: providers[0].config.thinking: not an assay provider setting",
    ]


def test_vars_read_from_a_file(tmp_path: Path) -> None:
    # promptfoo's test `vars: file://vars.yaml` (readVarsFiles in src/util/testCaseReader.ts).
    files = {
        "promptfooconfig.yaml": CONFIG + "tests: [{vars: 'file://vars/*.yaml'}]\n",
        "vars/a.yaml": "q: first\nr: kept\n",
        "vars/b.yaml": "q: second\n",
    }
    assert convert(write(tmp_path, files)).goldens[0]["vars"] == {"q": "second", "r": "kept"}
    (tmp_path / "vars" / "b.yaml").write_text("- not a mapping\n", encoding="utf-8")
    with pytest.raises(PromptfooConfigError, match=r"b\.yaml: must be a mapping"):
        convert(tmp_path / "promptfooconfig.yaml")


def test_a_test_files_vars_path_is_relative_to_that_file(tmp_path: Path) -> None:
    # promptfoo's readTest: a test's `vars: PATH` (no file:// needed) from the test file's folder
    files = {
        "promptfooconfig.yaml": CONFIG + "tests: file://cases/t.yaml\n",
        "cases/t.yaml": "- vars: ../vars/v_*.yaml\n",
        "vars/v_1.yaml": "q: from a vars file\n",
    }
    assert convert(write(tmp_path, files)).goldens[0]["vars"] == {"q": "from a vars file"}


def test_a_config_without_tests_is_one_empty_test(tmp_path: Path) -> None:
    # evaluator.ts: no tests -> one dummy test, defaultTest applied; a null provider config is
    # no config.
    text = (
        "prompts: [hi]\nproviders: [{id: 'openai:gpt-4o', config: null}]\n"
        "defaultTest: {assert: [{type: latency, threshold: 3000}]}\n"
    )
    conversion = convert(write(tmp_path, {"promptfooconfig.yaml": text}))
    assert [g["id"] for g in conversion.goldens] == ["promptfooconfig-1"]
    assert conversion.defaults == {"asserts": [{"op": "latency", "threshold": 3000}]}


def test_csv_prompts_and_json_chat_prompts(tmp_path: Path) -> None:
    # src/prompts/processors/csv.ts: a `prompt` column, cells trimmed; a prompt that is a JSON
    # list of {role, content} is sent as those messages.
    chat = (
        '[{""role"":""system"",""content"":""Be brief.""},'
        '{""role"":""user"",""content"":""{{q}}""}]'
    )
    files = {
        "promptfooconfig.yaml": "prompts: [file://p.csv, file://lines.csv]\nproviders: [echo]\n"
        "tests: [{vars: {q: x}}]\n",
        "p.csv": f'prompt,label\n" Tell me {{{{q}}}} ",basic\n"{chat}",chat\n',
        "lines.csv": "prompt\nFirst {{q}}\nSecond {{q}}\n",
    }
    bodies = [
        {k: v for k, v in c.items() if k != "id"}
        for c in convert(write(tmp_path, files)).candidates["candidates"]
    ]
    assert bodies == [
        {"prompt": "Tell me {{q}}"},
        {
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "{{q}}"},
            ]
        },
        {"prompt": "First {{q}}"},
        {"prompt": "Second {{q}}"},
    ]


def test_a_candidates_provider_does_not_inherit_the_first_providers_settings(
    tmp_path: Path,
) -> None:
    # A candidate's provider is merged over the file's: without clearing, the anthropic
    # candidate inherited openai's response_format and candidates.yaml did not load.
    from assay.models._candidates_file import load_candidates_file

    text = (
        "prompts: [hi]\nproviders:\n"
        "  - {id: openai:gpt-4o, config: {response_format: {type: json_object}, seed: 3}}\n"
        "  - anthropic:messages:claude-3-5-haiku-latest\ntests: [{}]\n"
    )
    write(tmp_path, {"promptfooconfig.yaml": text})
    code, _, err = run_cli(["import", "promptfoo", "promptfooconfig.yaml", "-o", "out"], tmp_path)
    assert code == 0, err
    loaded = load_candidates_file(tmp_path / "out" / "candidates.yaml")
    second = loaded.candidates[1].provider
    assert (second.type, second.response_format, second.seed) == ("anthropic", None, None)


def test_a_script_outside_the_config_folder_is_copied_into_external(tmp_path: Path) -> None:
    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "check.py").write_text("def get_assert(o, c):\n    return 1\n", "utf-8")
    files = {
        "suite/promptfooconfig.yaml": CONFIG
        + "tests: [{assert: [{type: python, value: 'file://../common/check.py'}]}]\n",
    }
    write(tmp_path, files)
    conversion = convert(tmp_path / "suite" / "promptfooconfig.yaml")
    assert conversion.goldens[0]["asserts"] == [
        {"op": "python", "value": "file://external/check.py"}
    ]
    assert list(conversion.files) == ["external/check.py"]


def test_an_assert_file_value_is_read_as_promptfoo_reads_it(tmp_path: Path) -> None:
    # processFileReference (src/assertions/utils.ts): .txt trimmed, other suffixes an error
    files = {
        "promptfooconfig.yaml": CONFIG + "tests: [{assert: [\n"
        "  {type: contains, value: 'file://word.txt'},\n"
        "  {type: contains, value: 'file://word.md'}]}]\n",
        "word.txt": "Paris\n",
        "word.md": "Paris\n",
    }
    conversion = convert(write(tmp_path, files))
    assert conversion.goldens[0]["asserts"] == [{"op": "contains", "value": "Paris"}]
    assert lines(conversion) == ["test 1: contains: promptfoo reads no .md file as an assert value"]


def test_inline_code_is_rendered_with_the_vars_as_promptfoo_renders_it(tmp_path: Path) -> None:
    # runAssertion: a string value is nunjucks.renderString(value, resolvedVars), code too
    text = CONFIG + (
        "tests: [{vars: {q: cat},\n"
        "         assert: [{type: javascript, value: \"output.includes('{{q}}')\"}]}]\n"
    )
    assert convert(write(tmp_path, {"promptfooconfig.yaml": text})).goldens[0]["asserts"] == [
        {"op": "javascript", "value": "output.includes('cat')"}
    ]


def test_a_threshold_promptfoo_ignores_keeps_the_assert(tmp_path: Path) -> None:
    # src/assertions/contains.ts handleContains never reads assertion.threshold: the check runs
    # as if it had none (promptfoo's config-csv-metadata example sets one on a contains cell).
    csv = "q,__expected,__config:__expected:threshold\nhi,contains: hello,0.9\n"
    config = write(
        tmp_path, {"promptfooconfig.yaml": CONFIG + "tests: file://t.csv\n", "t.csv": csv}
    )
    conversion = convert(config)
    assert conversion.goldens[0]["asserts"] == [{"op": "contains", "value": "hello"}]
    assert lines(conversion) == []


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("check.ts", "export default function (output) {\n  return output.length > 1;\n}\n"),
        ("check.js", "export default (output) => output.length > 1;\n"),
        ("check.mjs", "export function check(output) { return true; }\n"),
    ],
)
def test_typescript_and_es_module_scripts_are_listed_not_written(
    tmp_path: Path, name: str, text: str
) -> None:
    files = {
        "promptfooconfig.yaml": CONFIG
        + f"tests:\n  - vars: {{q: x}}\n    assert:\n      - {{type: javascript, value: 'file://{name}'}}\n",
        name: text,
    }
    conversion = convert(write(tmp_path, files))
    assert conversion.goldens[0].get("asserts", []) == []
    assert lines(conversion) == [
        "test 1: javascript: a TypeScript or ES-module script (export): assay runs CommonJS"
        " JavaScript (module.exports = function ...)"
    ]
    assert conversion.files == {}
