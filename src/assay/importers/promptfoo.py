"""Convert a promptfoo config (``promptfooconfig.yaml``) into assay goldens and a candidates file.

promptfoo's tests become goldens (one per test after promptfoo's var expansion), its prompts and
providers (``targets``, its alias) become candidates, its ``defaultTest`` becomes the goldens
folder's ``_defaults.yaml``. Everything that has no assay equivalent (model-graded asserts other
than ``llm-rubric``, which becomes assay's ``judge``; providers assay has no client for;
``redteam``, ``scenarios``, test generators, remote test sources, binary vars) is listed in
:attr:`Conversion.skipped`, never dropped silently. The semantics followed are promptfoo's, as
read from its source:

- ``vars`` whose value is a list of strings expand into the cartesian product of their values,
  the first key outermost (``generateVarCombinations``); a list of anything else is one value.
- ``defaultTest`` vars and asserts apply to every test; its asserts come first.
- ``file://`` var values are the file's text, trimmed (``renderPrompt`` in
  src/evaluatorHelpers.ts: ``fs.readFileSync(...).trim()``), a YAML file's JSON text; then one
  trailing newline is taken off every text var and ``{{ name }}`` references between vars are
  resolved (``resolveVariables``: the first reference of each var, up to 5 rounds).
- ``file://`` prompt files split on ``---`` lines; ``file://`` globs (prompts, tests, vars)
  expand to the files they match, sorted by path.
- ``file://`` values inside provider config are loaded (``maybeLoadConfigFromExternalFile``:
  JSON and YAML parsed, other files as text); scripts (.js, .py) they name are copied.
- ``javascript`` / ``python`` asserts and ``transform`` s (``options.transform``, its old name
  ``postprocess``, ``defaultTest.options.transform``, an assert's ``transform``, a provider's
  ``transform``) keep their code; a script file they name is copied next to the goldens, at
  its path relative to the config, so the written project finds it.
- Assert values holding ``{{ var }}`` are rendered per test with the test's vars (promptfoo
  renders them with Nunjucks; here Jinja2's sandbox, which reads the same simple templates).
- ``equals`` is promptfoo's exact match (``exact: true``); numbers in list values are text, as
  promptfoo compares ``String(value)``.

Nothing here writes a file: see ``assay.cli.import_``.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Final

import yaml

from assay._yaml import yaml_load
from assay.errors import ConfigError
from assay.importers import _promptfoo_providers
from assay.importers._promptfoo_csv import ASSERTION_TYPES, csv_prompts, csv_tests
from assay.importers._promptfoo_values import is_scalar, js_string, js_trim, resolve_variables
from assay.io import read_text
from assay.validate import At, Dict, List, did_you_mean, near_miss


class PromptfooConfigError(ConfigError):
    """A promptfoo config (or a file it names) that cannot be read or is not a promptfoo config."""


@dataclass(frozen=True)
class Skipped:
    """One construct that was not converted.

    Attributes:
        test: the 1-based number of the golden it came from (after var expansion), or None for
            the config as a whole (a prompt, a provider, ``defaultTest``, a top-level key).
        what: the construct (``llm-rubric``, ``options.transform``, ``providers[1]``).
        why: why it was not converted.
        title: the test's description, when it has one (shown next to the number).
    """

    test: int | None
    what: str
    why: str
    title: str | None = None

    def line(self) -> str:
        """``test 3 (description): llm-rubric: model-graded asserts are not converted``."""
        where = "config" if self.test is None else f"test {self.test}"
        if self.title:
            where += f" ({self.title})"
        return f"{where}: {self.what}: {self.why}"


@dataclass
class Conversion:
    """What :func:`convert` made of one promptfoo config.

    Attributes:
        stem: the config's file stem (the golden ids' prefix and the goldens file's name).
        description: the config's ``description``, if any.
        goldens: the goldens, in promptfoo's test order, as YAML-list golden records.
        candidates: the candidates file (``provider``, ``candidates``).
        defaults: the goldens folder's ``_defaults.yaml`` (``vars``, ``asserts``, ``threshold``),
            or None when the config has no ``defaultTest`` that converts to anything.
        skipped: every construct that was not converted, in the order met.
        candidate_rows: for each candidate id, promptfoo's ``promptIdx`` (providers outer,
            prompts inner, as promptfoo numbers them), so results can be compared row by row.
        files: the script files the goldens and candidates name (a ``javascript`` or
            ``python`` assert's, a transform's, a python provider's), by their path relative
            to the written project (the config's folder's layout), with their text.
    """

    stem: str
    description: str | None
    goldens: list[dict[str, Any]]
    candidates: dict[str, Any]
    defaults: dict[str, Any] | None
    skipped: list[Skipped] = field(default_factory=list)
    candidate_rows: dict[str, int] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)


# The asserts whose promptfoo name is assay's name (levenshtein alone takes a threshold too).
_SHARED_OPS: Final = frozenset(
    "equals contains icontains starts-with contains-any contains-all regex is-json contains-json"
    " levenshtein is-sql".split()
)
# assay's text ops take text: promptfoo compares String(value) for a number.
_TEXT_OPS: Final = frozenset({"contains", "icontains", "starts-with", "regex", "levenshtein"})
_MODEL_GRADED: Final = frozenset(
    "llm-rubric model-graded-closedqa model-graded-factuality factuality similar"
    " answer-relevance context-recall context-relevance context-faithfulness g-eval select-best"
    " max-score classifier moderation pi search-rubric conversation-relevance"
    " trajectory:goal-success".split()
)
# promptfoo's asserts on the call itself, which assay has under the same names.
_PERF_OPS: Final = frozenset({"cost", "latency"})
# Code asserts assay runs (javascript, python) and those it does not.
_CODE_OPS: Final = frozenset({"javascript", "python"})
_CODE: Final = frozenset({"webhook", "ruby"})
# The keys of an assert that every type understands (promptfoo's Assertion).
_COMMON_KEYS: Final = frozenset({"type", "value", "weight", "metric", "threshold"})
# The names a template sees besides the vars (a var may not take one).
_RESERVED: Final = ("input", "id", "tier", "title", "role")
_TEST_KEYS: Final = frozenset({"description", "vars", "assert", "threshold", "options", "metadata"})
_CONFIG_KEYS: Final = frozenset(
    {"description", "prompts", "providers", "targets", "tests", "defaultTest", "assertionTemplates"}
)
# The features promptfoo has that assay does not convert, named as a user knows them.
_FEATURES: Final = {
    "redteam": "red teaming (redteam:) generates its tests at run time: not converted",
    "scenarios": "scenarios (scenarios:) are not converted",
}
# Why a test's option is not converted (any other: "this option is not converted").
_OPTION_WHY: Final = {
    "transformVars": "var transforms (transformVars) are not converted",
    "provider": "the grading provider is assay's judge, set in assay.toml",
    "__prefix": "a CSV __prefix column (text before the prompt) is not converted",
    "__suffix": "a CSV __suffix column (text after the prompt) is not converted",
    "__providerOutput": "a CSV __providerOutput column (a canned output) is not converted",
}
# The output transforms, by promptfoo's names (postprocess is transform's older name).
_TRANSFORM_OPTIONS: Final = ("transform", "postprocess")
_SCRIPT_SUFFIXES: Final = (".js", ".cjs", ".mjs", ".ts", ".cts", ".mts", ".py")
# promptfoo reads these var files as bytes (base64 images, video and audio; a PDF's text).
_BINARY_VARS: Final = {
    **dict.fromkeys("jpg jpeg png gif bmp webp svg".split(), "an image"),
    **dict.fromkeys("mp4 webm ogg mov avi wmv mkv m4v".split(), "a video"),
    **dict.fromkeys("wav mp3 flac m4a aac opus".split(), "an audio file"),
    "pdf": "a PDF",
}
_GLOB: Final = re.compile(r"[*?\[{]")
# promptfoo's ``PROMPT_DELIMITER``: a line holding only ``---`` separates prompts in one file.
_PROMPT_SEPARATOR: Final = re.compile(r"\r?\n---\r?\n")
# The shapes of the config's own fields (the validation layer's messages: "must be a mapping").
_MAPPING: Final = Dict()
_LIST: Final = List()
_SET_ASSERTS: Final = List(non_empty=True, message="an assert-set needs a non-empty 'assert' list")


class _Yaml12Loader(yaml.SafeLoader):
    """PyYAML's safe loader, reading booleans and timestamps as promptfoo's YAML 1.2 parser does.

    Under YAML 1.1 ``body: Yes`` is True and ``on: 2024-01-01`` a date; promptfoo reads both as
    text, and a converted golden must hold what promptfoo would have sent to the model.
    """


_Yaml12Loader.yaml_implicit_resolvers = {
    first: [
        (tag, regexp)
        for tag, regexp in resolvers
        if tag not in ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:timestamp")
    ]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool",
    re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"),
)


def _load_yaml(text: str, source: str) -> Any:
    """A promptfoo YAML file, bounded as every YAML assay reads (size, nesting, aliases)."""
    return yaml_load(text, source, error=PromptfooConfigError, loader=_Yaml12Loader)


def _file_ref(value: Any) -> str | None:
    if isinstance(value, str) and value.startswith("file://"):
        return value[len("file://") :]
    return None


def _resolve(base: Path, ref: str) -> Path:
    path = Path(ref)
    return path if path.is_absolute() else base / path


def _split_function(ref: str) -> tuple[str, str | None]:
    """``checks.py:fn`` as (``checks.py``, ``fn``); a path without a function as (path, None)."""
    match = re.fullmatch(r"(.+\.[A-Za-z]+):([A-Za-z_$][\w$.]*)", ref)
    return (match.group(1), match.group(2)) if match else (ref, None)


@dataclass(frozen=True)
class _Provider:
    """One converted provider: promptfoo's id, assay's mapping, its output transform."""

    name: str
    provider: dict[str, Any]
    transform: dict[str, str] | None = None


@dataclass(frozen=True)
class _Test:
    """The golden an assert is converted for: the vars its values render with, its number and
    title (None for the config as a whole)."""

    vars: Mapping[str, Any]
    number: int | None = None
    title: str | None = None


class _Converter:
    def __init__(self, config_path: Path):
        self.base = config_path.parent
        self.source = str(config_path)
        self.at = At(self.source, error=PromptfooConfigError)
        self.skipped: list[Skipped] = []
        self.templates: Mapping[str, Any] = {}
        self.in_set = 0  # how deep inside assert-sets the assert being converted is
        self.files: dict[str, str] = {}  # the scripts to copy: project path -> text

    def skip(self, at: _Test | None, what: str, why: str) -> None:
        number, title = (None, None) if at is None else (at.number, at.title)
        self.skipped.append(Skipped(number, what, why, title))

    def skip_config(self, what: str, why: str) -> None:
        self.skip(None, what, why)

    def script(self, ref: str, where: str) -> str:
        """The reference to write for the script ``ref`` names (``path`` or ``path:function``,
        relative to the config): the file is copied into the written project at the same
        relative path, so the project finds it from its root; a file outside the config's
        folder goes in ``external/`` (under a name of its own when two would clash)."""
        name, function = _split_function(ref)
        path = _resolve(self.base, name)
        text = self.read(path, where)
        try:
            target = path.resolve().relative_to(self.base.resolve()).as_posix()
        except ValueError:
            target = f"external/{path.name}"
        if target.startswith(("goldens/", "external/")) or target == "candidates.yaml":
            target = f"external/{path.name}"
            n = 1
            while self.files.get(target, text) != text:
                n += 1
                target = f"external/{path.stem}-{n}{path.suffix}"
        self.files[target] = text
        return target if function is None else f"{target}:{function}"

    def code(self, value: Any, language: str, where: str) -> str:
        """A code assert's or transform's value as assay's: inline code as it is, a
        ``file://`` script as ``file://`` its copied path (``:function`` kept)."""
        if not isinstance(value, str) or not value.strip():
            raise _Skip(f"its {language} code is not text")
        ref = _file_ref(value.strip())
        if ref is None:
            return value
        name = _split_function(ref)[0]
        path = _resolve(self.base, name)
        if not path.is_file():
            # promptfoo fails this one check at run time; the rest of the suite converts.
            raise _Skip(f"the file it names, {name}, is missing")
        if language == "javascript" and _not_commonjs(path, self.read(path, where)):
            raise _Skip(
                "a TypeScript or ES-module script (export): assay runs CommonJS JavaScript "
                "(module.exports = function ...)"
            )
        return "file://" + self.script(ref, where)

    def transform(self, value: Any, where: str) -> dict[str, str]:
        """promptfoo's transform (src/util/transform.ts): ``file://x.py[:fn]`` is Python, any
        other text JavaScript (inline, or ``file://x.js[:fn]``)."""
        ref = _file_ref(value.strip()) if isinstance(value, str) else None
        python = ref is not None and _split_function(ref)[0].endswith(".py")
        language = "python" if python else "javascript"
        return {language: self.code(value, language, where)}

    def fail(self, message: str, field: str | None = None) -> PromptfooConfigError:
        return PromptfooConfigError(message, source=self.source, field=field)

    def read(self, path: Path, where: str) -> str:
        """The text of a file the config names; an error names the config and the field (the
        user wrote the path there), then the file."""
        try:
            return read_text(path, PromptfooConfigError)
        except PromptfooConfigError as exc:
            raise self.fail(f"{exc.message} (at {path})", where) from None

    # -- prompts --------------------------------------------------------------------------

    def prompts(self, raw: Any) -> list[dict[str, Any] | None]:
        """Each prompt as a candidate body (``prompt`` or ``messages``), in promptfoo's order;
        None for one that does not convert (it keeps its place: promptfoo numbers it)."""
        if isinstance(raw, (str, dict)):
            raw = [raw]
        if not isinstance(raw, list) or not raw:
            raise self.fail("must be a prompt or a non-empty list of prompts", "prompts")
        out: list[dict[str, Any] | None] = []
        for i, entry in enumerate(raw):
            where = f"prompts[{i}]"
            text = entry.get("raw", entry.get("id")) if isinstance(entry, dict) else entry
            if not isinstance(text, str) or not text:
                raise self.fail("a prompt must be text, file://PATH or {id|raw, label}", where)
            ref = _file_ref(text)
            if ref is not None and _split_function(ref)[0].lower().endswith(_SCRIPT_SUFFIXES):
                # A prompt function: the whole prompt is not converted, not just its options.
                language = "Python" if _split_function(ref)[0].endswith(".py") else "JavaScript"
                why = f"a {language} prompt function is not converted"
                self.skip(None, f"{where} (file://{ref})", why)
                out.append(None)
                continue
            if isinstance(entry, dict):
                for key in sorted(set(entry) - {"raw", "id", "label"}, key=str):
                    self.skip(None, f"{where}.{key}", "prompt options are not converted")
            bodies = [_prompt_body(text)] if ref is None else self._prompt_files(ref, where)
            for n, body in enumerate(bodies):
                label = where if len(bodies) == 1 else f"{where} (prompt {n + 1} of its file)"
                out.append(self._checked(body, label))
        return out

    def _checked(self, body: dict[str, Any] | None, where: str) -> dict[str, Any] | None:
        """``body`` when each of its templates compiles as Jinja2, else None (listed): a
        Nunjucks-only filter such as ``load`` would stop assay when it loads candidates.yaml."""
        if body is None:
            return None
        texts = [body["prompt"]] if "prompt" in body else [m["content"] for m in body["messages"]]
        for text in texts:
            problem = _compile_problem(text)
            if problem is not None:
                self.skip(None, where, f"not a Jinja2 template ({problem})")
                return None
        return body

    def _prompt_files(self, ref: str, where: str) -> list[dict[str, Any] | None]:
        """The prompts of a ``file://`` prompt: one file's, or a glob's files' in turn."""
        if not _GLOB.search(ref):
            return self._prompt_file(ref, where)
        matches = self.glob(ref, where)
        return [body for match in matches for body in self._prompt_file(match, where)]

    def glob(self, ref: str, where: str) -> list[str]:
        """The files a ``file://`` glob matches, relative to the config, sorted by path
        (promptfoo takes them in the order its glob lists them); none is an error, as in
        promptfoo ("No files found matching pattern")."""
        found = self._glob_paths(str(_resolve(self.base, ref)), ref, where)
        base = str(self.base)
        return [str(Path(p).relative_to(base)) if not Path(ref).is_absolute() else p for p in found]

    def _glob_paths(self, pattern: str, ref: str, where: str) -> list[str]:
        import glob as globbing

        found = sorted(p for p in globbing.glob(pattern, recursive=True) if Path(p).is_file())
        if not found:
            raise self.fail(f"file://{ref}: no file matches this pattern", where)
        return found

    def _prompt_file(self, ref: str, where: str) -> list[dict[str, Any] | None]:
        path = _resolve(self.base, ref)
        suffix = path.suffix.lower()
        named = f"{where} (file://{ref})"
        if suffix in (".json", ".yaml", ".yml"):
            text = self.read(path, where)
            try:
                chat = json.loads(text) if suffix == ".json" else _load_yaml(text, named)
            except RecursionError:
                raise self.fail(f"file://{ref}: the JSON is nested too deeply", where) from None
            except (ValueError, PromptfooConfigError) as exc:
                if isinstance(exc, PromptfooConfigError) and "malformed" not in exc.message:
                    raise  # too big, too deep, an alias bomb: refused, as in the config itself
                # promptfoo renders such a file as a Nunjucks template *before* parsing it (a loop
                # over _conversation); assay parses a chat file first, then renders each content.
                why = "a chat prompt that is a template before it is JSON is not converted"
                self.skip(None, named, why)
                return [None]
            if not _is_chat(chat):
                self.skip(None, named, "not a list of {role, content}")
                return [None]
            return [{"messages": [{"role": m["role"], "content": m["content"]} for m in chat]}]
        if suffix in ("", ".txt", ".md", ".j2", ".prompt"):
            text = self.read(path, where)
            parts = [part.strip() for part in _PROMPT_SEPARATOR.split(text)]
            return [{"prompt": part} for part in parts if part]
        if suffix == ".csv":
            return [_prompt_body(raw) for raw in csv_prompts(self.read(path, where))]
        self.skip(None, named, f"{suffix} prompt files are not converted")
        return [None]

    # -- providers ------------------------------------------------------------------------

    def providers(self, raw: Any, field: str = "providers") -> list[_Provider | None]:
        """(name, assay provider mapping, transform) for each provider, None for one that does
        not convert (it keeps its place: promptfoo numbers its rows by it)."""
        if raw is None:
            raise self.fail("is required (or its alias, targets)", "providers")
        if isinstance(raw, (str, dict)):
            raw = [raw]
        if not isinstance(raw, list):
            raise self.fail("must be a provider or a list of providers", field)
        out: list[_Provider | None] = []
        for i, entry in enumerate(raw):
            where = f"{field}[{i}]"
            config: Mapping[str, Any] = {}
            name: Any = entry
            transform = None
            if isinstance(entry, dict):
                name = entry.get("id")
                raw_config = entry.get("config")
                config = _MAPPING.check(
                    {} if raw_config is None else raw_config, self.at, f"{where}.config"
                )
                config = {
                    k: self._config_files(v, f"{where}.config.{k}") for k, v in config.items()
                }
                if "transform" in entry:
                    transform = self._provider_transform(entry["transform"], where)
                for key in sorted(set(entry) - {"id", "config", "label", "transform"}, key=str):
                    self.skip(None, f"{where}.{key}", "provider options are not converted")
            if not isinstance(name, str) or not name:
                raise self.fail("a provider must be a name or {id, config}", where)
            converted = _promptfoo_providers.convert(name, config, where, self)
            out.append(None if converted is None else _Provider(name, converted, transform))
        return out

    def _provider_transform(self, value: Any, where: str) -> dict[str, str] | None:
        try:
            return self.transform(value, f"{where}.transform")
        except _Skip as skip:
            self.skip(None, f"{where}.transform", skip.why)
            return None

    def _config_files(self, value: Any, where: str) -> Any:
        """promptfoo's ``maybeLoadConfigFromExternalFile`` over a provider's config: every
        ``file://`` value loaded (JSON and YAML parsed, other files as text, a glob as the list
        of its files' contents); a script (.js, .py) stays a reference, as it is code."""
        if isinstance(value, list):
            return [self._config_files(item, where) for item in value]
        if isinstance(value, dict):
            return {k: self._config_files(v, f"{where}.{k}") for k, v in value.items()}
        ref = _file_ref(value)
        if ref is None or _split_function(ref)[0].lower().endswith(_SCRIPT_SUFFIXES):
            return value
        if _GLOB.search(ref):
            loaded: list[Any] = []
            for match in self.glob(ref, where):
                item = self._value_file(match, where)
                loaded.extend(item if isinstance(item, list) else [item])
            return loaded
        return self._value_file(ref, where)

    # -- tests ----------------------------------------------------------------------------

    def tests(self, raw: Any) -> list[tuple[dict[str, Any], str | None]]:
        """Every test record with its default title (``Row #N`` for a CSV file's rows)."""
        if isinstance(raw, (str, dict)) and not (isinstance(raw, dict) and _is_test(raw)):
            raw = [raw]
        if not isinstance(raw, list):
            raise self.fail("must be a list of tests or file://PATH", "tests")
        out: list[tuple[dict[str, Any], str | None]] = []
        for i, entry in enumerate(raw):
            where = f"tests[{i}]"
            source = entry.get("path") if isinstance(entry, dict) and not _is_test(entry) else entry
            unsupported = _test_source_feature(source)
            if unsupported is not None:
                self.skip(None, f"{where} ({source})", unsupported)
                continue
            ref = _file_ref(source)
            if ref is not None:
                refs = self.glob(ref, where) if _GLOB.search(ref) else [ref]
                for one in refs:
                    rows = self._test_file(one, where)
                    # promptfoo names a CSV file's rows itself; a JSONL or YAML row has no name.
                    csv_rows = one.lower().endswith(".csv")
                    out.extend(
                        (row, f"Row #{n}" if csv_rows else None) for n, row in enumerate(rows, 1)
                    )
            elif isinstance(entry, dict):
                out.append((entry, None))
            else:
                raise self.fail("a test must be a mapping or file://PATH", where)
        return out

    def _test_file(self, ref: str, where: str) -> list[dict[str, Any]]:
        path = _resolve(self.base, ref)
        suffix = path.suffix.lower()
        source = str(path)
        if suffix == ".csv":
            try:
                return csv_tests(self.read(path, where), source)
            except ConfigError as exc:
                raise PromptfooConfigError(exc.message, source=source) from None
        if suffix == ".jsonl":
            rows: list[dict[str, Any]] = []
            for n, line in enumerate(self.read(path, where).splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except ValueError as exc:
                    raise PromptfooConfigError(
                        f"line {n}: not JSON ({exc})", source=source
                    ) from None
                if not isinstance(row, dict):
                    raise PromptfooConfigError(f"line {n}: a test must be an object", source=source)
                rows.append(row)
            return rows
        if suffix in (".yaml", ".yml", ".json"):
            data = _load_yaml(self.read(path, where), source)
            data = [data] if isinstance(data, dict) else data
            if not isinstance(data, list) or not all(isinstance(t, dict) for t in data):
                raise PromptfooConfigError("must be a list of tests", source=source)
            # A test file's `vars: PATH` names vars files relative to the test file.
            return [self._own_vars_files(test, path.parent, where) for test in data]
        raise self.fail(f"file://{ref}: {suffix or 'this'} test files are not supported", where)

    def vars_of(self, raw: Any, test: _Test | None, where: str) -> dict[str, Any]:
        """The vars with ``file://`` values read as text (relative to the config)."""
        if raw is None:
            return {}
        if isinstance(raw, (str, list)):
            # `vars: file://vars.yaml` (or paths, globs): the files' mappings merged.
            raw = self._own_vars_files({"vars": raw}, self.base, where)["vars"]
        _MAPPING.check(raw, self.at, f"{where}.vars")
        return {
            str(name): self._var_value(value, test, f"{where}.vars.{name}")
            for name, value in raw.items()
        }

    def _own_vars_files(self, test: dict[str, Any], base: Path, where: str) -> dict[str, Any]:
        """``test`` with ``vars: PATH`` (or a list of paths) read relative to ``base``."""
        raw = test.get("vars")
        paths = [raw] if isinstance(raw, str) else raw
        if not isinstance(paths, list) or not paths or not all(isinstance(p, str) for p in paths):
            return test
        merged: dict[str, Any] = {}
        for one in paths:
            merged.update(self._vars_files(_file_ref(one) or one, f"{where}.vars", base))
        return {**test, "vars": merged}

    def _vars_files(self, ref: str, where: str, base: Path | None = None) -> dict[str, Any]:
        """``vars: file://vars.yaml`` (or a glob): promptfoo's ``readVarsFiles``, each file's
        mapping merged over the previous ones'."""
        base = self.base if base is None else base
        merged: dict[str, Any] = {}
        pattern = str(_resolve(base, ref))
        matches = self._glob_paths(pattern, ref, where) if _GLOB.search(ref) else [pattern]
        for one in matches:
            path = Path(one)
            data = _load_yaml(self.read(path, where), str(path))
            merged.update(_MAPPING.check(data, At(str(path), error=PromptfooConfigError), None))
        return merged

    def _var_value(self, value: Any, test: _Test | None, where: str) -> Any:
        if isinstance(value, list):
            return [self._var_value(item, test, where) for item in value]
        ref = _file_ref(value)
        if ref is None:
            return value
        if _GLOB.search(ref):
            # promptfoo's generateVarCombinations: a glob is one value per file it matches.
            return [self._var_value(f"file://{m}", test, where) for m in self.glob(ref, where)]
        path = _resolve(self.base, ref)
        suffix = path.suffix.lower()
        if suffix in (".js", ".cjs", ".mjs", ".ts", ".py", ".rb"):
            # A script var runs code at render time: its value is not known here.
            self.skip(test, where, "a var computed by a script is not converted")
            return value
        binary = _BINARY_VARS.get(suffix.lstrip("."))
        if binary is not None:
            why = f"a binary var ({binary}: promptfoo sends base64 or its text) is not converted"
            self.skip(test, where, why)
            return value
        if suffix in (".yaml", ".yml"):
            # promptfoo: JSON.stringify(yaml.load(text)), compact.
            data = _load_yaml(self.read(path, where), str(path))
            return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        # promptfoo: fs.readFileSync(filePath, 'utf8').trim()
        return js_trim(self.read(path, where))

    def asserts(self, raw: Any, at: _Test, where: str) -> list[Any]:
        if raw is None:
            return []
        _LIST.check(raw, self.at, f"{where}.assert")
        out = (self._assert(entry, at, f"{where}.assert[{i}]") for i, entry in enumerate(raw))
        return [converted for converted in out if converted is not None]

    def _assert(self, entry: Any, at: _Test, where: str) -> dict[str, Any] | None:
        """The assert as assay's, or None when it does not convert: whatever raises
        :class:`_Skip` below is listed as skipped instead."""
        if isinstance(entry, dict) and set(entry) == {"$ref"}:
            entry = self._ref(entry["$ref"], where)
        if not isinstance(entry, dict) or not isinstance(entry.get("type"), str):
            raise self.fail("an assert must be a mapping with a 'type'", where)
        kind: str = entry["type"]
        negated = kind.startswith("not-")
        base = kind[4:] if negated else kind
        try:
            if kind == "assert-set":
                return _named(entry, self._assert_set(entry, at, where))
            converted = self._converted(entry, kind, base, negated, at, where)
        except _Skip as skip:
            self.skip(at, skip.what or kind, skip.why)
            return None
        if negated:
            converted["op"] = "not-" + converted["op"]
        return _named(entry, converted)

    def _converted(
        self, entry: Mapping[str, Any], kind: str, base: str, negated: bool, at: _Test, where: str
    ) -> dict[str, Any]:
        """One assert (not a set) as assay's; :class:`_Skip` when it does not convert."""
        if base in _MODEL_GRADED and base != "llm-rubric":
            raise _Skip("model-graded asserts are not converted")
        if base in _CODE:
            raise _Skip(f"{base} asserts are not converted")
        if base not in ASSERTION_TYPES and base not in _MODEL_GRADED:
            raise _Skip("not a promptfoo assert type assay knows")
        _refuse_keys(entry, kind)
        if base in _CODE_OPS:
            converted = self._code_assert(entry, base, at, where)
        elif base == "llm-rubric" or base in _PERF_OPS:
            converted = self._graded_or_perf(entry, base, negated, at)
        else:
            value = entry.get("value")
            ref = _file_ref(value)
            if ref is not None:
                value = self._assert_file(ref, f"{where}.value")
            converted = _op(base, _render(value, at.vars), entry)
        if "transform" in entry:
            try:
                converted["transform"] = self.transform(entry["transform"], f"{where}.transform")
            except _Skip as skip:
                raise _Skip(skip.why, f"{kind} (transform)") from None
        return converted

    def _code_assert(
        self, entry: Mapping[str, Any], base: str, at: _Test, where: str
    ) -> dict[str, Any]:
        """A ``javascript`` or ``python`` assert: its code or ``file://`` script, as assay's op
        of the same name (the script copied with the project); its threshold kept. Inline code
        is rendered with the test's vars first, as promptfoo renders every string value."""
        code = self.code(entry.get("value"), base, where)
        if not code.startswith("file://"):
            code = _render(code, at.vars)
        converted: dict[str, Any] = {"op": base, "value": code}
        if "threshold" in entry:
            converted["threshold"] = entry["threshold"]
        return converted

    def _graded_or_perf(
        self, entry: Mapping[str, Any], base: str, negated: bool, at: _Test
    ) -> dict[str, Any]:
        """``llm-rubric`` as assay's ``judge`` (the rubric and its threshold), ``cost`` and
        ``latency`` as assay's ops of those names (a threshold in USD, in milliseconds)."""
        if negated:
            assay_op = "judge" if base == "llm-rubric" else base
            raise _Skip(f"assay's {assay_op} cannot be negated")
        threshold = entry.get("threshold")
        if threshold is not None and (
            isinstance(threshold, bool) or not isinstance(threshold, (int, float))
        ):
            raise _Skip("its threshold is not a number")
        if base != "llm-rubric":
            if threshold is None:
                raise _Skip("it has no threshold")
            if "value" in entry:
                raise _Skip(f"{base} takes no value in assay")
            return {"op": base, "threshold": threshold}
        if self.in_set:
            raise _Skip("assay's judge asserts cannot be inside an assert-set")
        rubric = entry.get("value")
        if isinstance(rubric, str):
            rubric = _render(rubric, at.vars)
        if not isinstance(rubric, str) or not rubric.strip():
            raise _Skip("its rubric (value) is not text")
        converted: dict[str, Any] = {"op": "judge", "rubric": rubric}
        if threshold is not None:
            converted["threshold"] = threshold
        return converted

    def _assert_file(self, ref: str, where: str) -> Any:
        """An assert's ``file://`` value as promptfoo's ``processFileReference`` reads it
        (src/assertions/utils.ts): JSON or YAML parsed, a ``.txt`` file's text trimmed, any
        other file an error of that check ("Unsupported file type")."""
        suffix = _resolve(self.base, ref).suffix.lower()
        if suffix == ".txt":
            return js_trim(self.read(_resolve(self.base, ref), where))
        if suffix not in (".json", ".yaml", ".yml"):
            raise _Skip(f"promptfoo reads no {suffix or 'suffix-less'} file as an assert value")
        return self._value_file(ref, where)

    def _value_file(self, ref: str, where: str) -> Any:
        """An assert's ``file://`` value as promptfoo loads it: JSON or YAML parsed (a schema),
        any other file as its text."""
        path = _resolve(self.base, ref)
        text = self.read(path, where)
        suffix = path.suffix.lower()
        if suffix == ".json":
            try:
                return json.loads(text)
            except RecursionError:
                raise self.fail(f"file://{ref}: the JSON is nested too deeply", where) from None
            except ValueError as exc:
                raise self.fail(f"file://{ref}: not JSON ({exc})", where) from None
        if suffix in (".yaml", ".yml"):
            return _load_yaml(text, str(path))
        return text

    def _assert_set(self, entry: Mapping[str, Any], at: _Test, where: str) -> dict[str, Any]:
        extra = sorted(map(str, set(entry) - {"type", "assert", "threshold", "weight", "metric"}))
        if extra:
            raise _Skip(f"unknown keys {', '.join(extra)}: left out")
        children_raw = _SET_ASSERTS.check(entry.get("assert"), self.at, where)
        before = len(self.skipped)
        self.in_set += 1
        try:
            children = self.asserts(children_raw, at, where)
        finally:
            self.in_set -= 1
        if len(self.skipped) != before:
            # A set scores its children together: without one of them its score would change.
            raise _Skip("one of its asserts is not converted: the set is left out")
        converted: dict[str, Any] = {"op": "assert-set", "asserts": children}
        if "threshold" in entry:
            converted["threshold"] = entry["threshold"]
        return converted

    def _ref(self, ref: Any, where: str) -> Any:
        prefix = "#/assertionTemplates/"
        if not isinstance(ref, str) or not ref.startswith(prefix):
            raise self.fail(f"only {prefix}NAME references are supported", where)
        name = ref[len(prefix) :]
        if name not in self.templates:
            raise self.fail(f"no assertion template named {name!r}", where)
        return self.templates[name]


def _is_test(entry: Mapping[str, Any]) -> bool:
    """A test record, not promptfoo's ``{path, config}`` test generator or source."""
    return "path" not in entry


def _test_source_feature(source: Any) -> str | None:
    """Why a ``tests`` entry is a source assay does not read (a generator, a remote file), by
    the feature's name; None for a test or a local file."""
    if not isinstance(source, str):
        return None
    lowered = source.lower()
    if "docs.google.com/spreadsheets" in lowered:
        return "Google Sheets test sources are not converted"
    if lowered.startswith(("https://", "http://")):
        return "remote test sources (https://) are not converted"
    if lowered.startswith("huggingface://"):
        return "Hugging Face dataset test sources are not converted"
    ref = _file_ref(source)
    if ref is not None and _split_function(ref)[0].lower().endswith(_SCRIPT_SUFFIXES):
        return "tests made by a script (a test generator) are not converted"
    return None


class _Skip(Exception):
    """An assert that does not convert: ``why``, listed under ``what`` (None: its type)."""

    def __init__(self, why: str, what: str | None = None) -> None:
        super().__init__(why)
        self.why, self.what = why, what


def _refuse_keys(entry: Mapping[str, Any], kind: str) -> None:
    """Skip an assert with a key assay cannot convert (a transform, its own provider...) or
    does not know."""
    for key in ("provider", "rubricPrompt", "contextTransform", "config"):
        if key in entry:
            raise _Skip("not converted: the assert is left out", f"{kind} ({key})")
    extra = sorted(map(str, set(entry) - _COMMON_KEYS - {"transform"}))
    if extra:
        raise _Skip(f"unknown assert keys {', '.join(extra)}: left out")


def _op(base: str, value: Any, entry: Mapping[str, Any]) -> dict[str, Any]:
    """An assert on the output's text or JSON as assay's op of the same meaning."""
    if base in ("icontains-any", "icontains-all"):
        # assay has no case-blind list op; a case-blind regex decides the same way.
        items = _items(value)
        if not items:
            raise _Skip("its value is not a list of text")
        escaped = [re.escape(str(item)) for item in items]
        if base == "icontains-any":
            pattern = "|".join(escaped)
        else:
            pattern = "^" + "".join(f"(?=.*?{item})" for item in escaped)
        return {"op": "regex", "value": pattern, "flags": "is"}
    if base not in _SHARED_OPS:
        raise _Skip("assay has no equivalent assert")
    # A threshold on any other of these asserts is left out, as promptfoo leaves it: their
    # handlers (src/assertions/contains.ts, equals.ts, regex.ts, json.ts, sql.ts, startsWith.ts)
    # never read ``assertion.threshold``; their score is 1 or 0.
    if base == "is-sql" and value is not None:
        raise _Skip("is-sql options (databaseType, allowed tables) are not converted")
    if base == "is-json" and value is not None:
        # promptfoo's is-json with a schema is "is JSON and validates": assay's json-schema.
        return {"op": "json-schema", "value": value}
    if value is None:
        if base not in ("is-json", "contains-json", "is-sql"):
            raise _Skip("it has no value")
        return {"op": base}
    if base in _TEXT_OPS | {"equals"} and is_scalar(value):
        value = js_string(value)  # promptfoo compares String(value)
    if base in ("contains-any", "contains-all") and isinstance(value, list):
        value = [js_string(item) if is_scalar(item) else item for item in value]
    converted: dict[str, Any] = {"op": base, "value": value}
    if base == "equals":
        # promptfoo's equals is exact; assay's ignores surrounding whitespace unless told.
        converted["exact"] = True
    if base == "levenshtein" and "threshold" in entry:
        converted["threshold"] = entry["threshold"]
    return converted


def _named(entry: Mapping[str, Any], converted: dict[str, Any]) -> dict[str, Any]:
    """``converted`` with the assert's weight and its metric (assay's ``name``)."""
    if "weight" in entry:
        converted["weight"] = entry["weight"]
    if "metric" in entry:
        converted["name"] = entry["metric"]
    return converted


def _prompt_body(raw: str) -> dict[str, Any]:
    """A prompt's text as a candidate body: a JSON list of ``{role, content}`` is a chat
    (promptfoo's chat providers send such a prompt as its messages), anything else the text."""
    if raw.lstrip().startswith("["):
        try:
            chat = json.loads(raw)
        except (ValueError, RecursionError):
            chat = None
        if _is_chat(chat):
            return {"messages": [{"role": m["role"], "content": m["content"]} for m in chat]}
    return {"prompt": raw}


# An ES-module export statement at the start of a line (promptfoo loads such files through its
# TypeScript/ESM loader; assay's engine runs CommonJS files).
_ES_EXPORT: Final = re.compile(r"^\s*export\s+(default\b|function\b|const\b|async\b|\{)", re.M)


def _not_commonjs(path: Path, text: str) -> bool:
    """Whether a JavaScript script is TypeScript or an ES module, which assay cannot run."""
    return path.suffix.lower() in (".ts", ".mts", ".cts") or bool(_ES_EXPORT.search(text))


def _is_chat(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(
            isinstance(m, dict)
            and set(m) == {"role", "content"}
            and m["role"] in ("system", "user", "assistant")
            and isinstance(m["content"], str)
            for m in value
        )
    )


def _items(value: Any) -> list[Any]:
    """A list assert's items: a list, or promptfoo's comma-separated text (quotes keep commas)."""
    if isinstance(value, list):
        texts = [js_string(item) if is_scalar(item) else item for item in value]
        return [item for item in texts if isinstance(item, str) and item != ""]
    if isinstance(value, str):
        row = next(csv.reader([value], skipinitialspace=True), [])
        return [item.strip() for item in row if item.strip()]
    return []


def _render(value: Any, vars_: Mapping[str, Any]) -> Any:
    """``value`` with every string holding ``{{`` / ``{%`` rendered from ``vars_`` (promptfoo
    renders assert values with the test's vars), in Jinja2's immutable sandbox: an assert value
    is data from a config file, never code to trust."""
    if isinstance(value, list):
        return [_render(item, vars_) for item in value]
    if isinstance(value, dict):
        return {key: _render(item, vars_) for key, item in value.items()}
    if not _templated(value):
        return value
    import jinja2

    try:
        return str(_sandbox_env().from_string(value).render(dict(vars_)))
    except jinja2.TemplateError as exc:
        raise _Skip(f"its templated value does not render: {exc}") from None


@cache
def _sandbox_env() -> Any:
    import jinja2
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    # StrictUndefined: a var the test does not have must not render as an empty string.
    return ImmutableSandboxedEnvironment(undefined=jinja2.StrictUndefined, autoescape=False)


def _compile_problem(text: str) -> str | None:
    """Jinja2's complaint about ``text`` as a template (an unknown filter, a syntax error)."""
    import jinja2

    try:
        _sandbox_env().from_string(text)
    except jinja2.TemplateSyntaxError as exc:
        return f"line {exc.lineno}: {exc.message or exc}"
    return None


def _expand(vars_: Mapping[str, Any]) -> list[dict[str, Any]]:
    """promptfoo's ``generateVarCombinations``: a list of strings is one value each (the first
    key outermost); a list of anything else stays one value."""
    combinations: list[dict[str, Any]] = [{}]
    for key, value in vars_.items():
        values = value if _expands(value) else [value]
        combinations = [{**combo, key: item} for combo in combinations for item in values]
    return combinations


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "provider"


def _read_config(path: Path) -> dict[str, Any]:
    data = _load_yaml(read_text(path, PromptfooConfigError), str(path))
    if not isinstance(data, dict):
        raise PromptfooConfigError(
            "not a promptfoo config: the document is not a mapping", source=str(path)
        )
    for key in ("prompts", "tests"):
        feature = next((f for f in _FEATURES if f in data), None)
        if key == "tests" and key not in data and feature is None and "prompts" in data:
            # promptfoo runs a config without tests as one empty test (defaultTest applies):
            # evaluator.ts, "Dummy test for cases when we're only comparing raw prompts".
            data = {**data, "tests": [{}]}
            continue
        if key not in data and feature is not None:
            # The config is one of a feature assay lacks: name it, not the missing field.
            raise PromptfooConfigError(
                f"{_FEATURES[feature]} (the config has no {key} of its own to convert)",
                source=str(path),
                field=feature,
            )
        if key not in data:
            typo = next((k for k in data if near_miss(k, (key,), cutoff=0.8) == key), None)
            raise PromptfooConfigError(
                "not a promptfoo config (or one assay cannot convert): it is required"
                + ("" if typo is None else f" (the config has {typo!r}: did you mean {key!r}?)"),
                source=str(path),
                field=key,
            )
    return data


def convert(config_path: Path | str) -> Conversion:
    """Convert the promptfoo config at ``config_path`` (``file://`` paths relative to its folder).

    Raises:
        PromptfooConfigError: the config or a file it names cannot be read, is malformed, or the
            config is not a promptfoo config (no ``prompts`` or ``tests``).
    """
    path = Path(config_path)
    config = _read_config(path)
    conv = _Converter(path)
    templates = config.get("assertionTemplates") or {}
    conv.templates = _MAPPING.check(templates, conv.at, "assertionTemplates")
    description = config.get("description")
    for key in sorted(set(config) - _CONFIG_KEYS, key=str):
        why = _FEATURES.get(str(key)) or did_you_mean(
            "this config key is not converted", key, _CONFIG_KEYS, cutoff=0.8
        )
        conv.skip(None, str(key), why)

    prompts = conv.prompts(config["prompts"])
    # targets: promptfoo's alias of providers (providers wins when a config has both).
    field = "providers" if "providers" in config or "targets" not in config else "targets"
    providers = conv.providers(config.get(field), field)
    default_test = _default_test(conv, config.get("defaultTest"))
    defaults_vars = conv.vars_of(default_test.get("vars"), None, "defaultTest")
    default_meta = default_test.get("metadata") or {}
    # A templated defaultTest assert renders with each test's vars (promptfoo renders it per
    # test), so it is copied, rendered, into every golden instead of into _defaults.yaml.
    default_asserts = default_test.get("assert")
    per_test: list[Any] = []
    if isinstance(default_asserts, list):
        per_test = [a for a in default_asserts if _templated(a)]
        default_test = {**default_test, "assert": [a for a in default_asserts if not _templated(a)]}
    defaults = _defaults(conv, default_test, defaults_vars)

    goldens: list[dict[str, Any]] = []
    for i, (test, row_title) in enumerate(conv.tests(config["tests"])):
        goldens.extend(
            _goldens(conv, test, row_title, i, len(goldens), defaults_vars, default_meta, per_test)
        )
    stem = _stem(path)
    for n, golden in enumerate(goldens, 1):
        golden["id"] = f"{stem}-{n}"
    if not goldens:
        reason = next((s.line() for s in conv.skipped if s.what.startswith("tests[")), None)
        if reason is not None:
            raise conv.fail(f"no test converts ({reason})", "tests")
    candidates, rows = _candidates(conv, prompts, providers)
    defaults = _provider_transform(conv, providers, defaults, goldens)
    return Conversion(
        stem=stem,
        description=description if isinstance(description, str) else None,
        goldens=goldens,
        candidates=candidates,
        defaults=defaults,
        skipped=conv.skipped,
        candidate_rows=rows,
        files=conv.files,
    )


def _provider_transform(
    conv: _Converter,
    providers: list[_Provider | None],
    defaults: dict[str, Any] | None,
    goldens: list[dict[str, Any]],
) -> dict[str, Any] | None:
    """A provider's ``transform`` runs on its output before any test's (promptfoo applies it
    in the provider call). assay has no candidate-level transform: when every provider has the
    same one and no test or default has its own, it is the defaults' transform; else listed."""
    transforms = [p.transform for p in providers if p is not None]
    if not any(transforms):
        return defaults
    own = any("transform" in g for g in goldens) or "transform" in (defaults or {})
    if len({json.dumps(t, sort_keys=True) for t in transforms}) == 1 and not own:
        return {**(defaults or {}), "transform": transforms[0]}
    for i, named in enumerate(providers):
        if named is not None and named.transform is not None:
            why = (
                "a provider's transform is not converted when the providers' transforms differ "
                "or a test has its own (assay has no candidate-level transform)"
            )
            conv.skip(None, f"providers[{i}].transform", why)
    return defaults


def _stem(path: Path) -> str:
    """``promptfooconfig`` for ``promptfooconfig.yaml``, ``echo.promptfooconfig`` for
    ``echo.promptfooconfig.yaml``: the name without its YAML suffix."""
    return re.sub(r"\.(yaml|yml|json)$", "", path.name, flags=re.IGNORECASE) or "config"


def _default_test(conv: _Converter, raw: Any) -> dict[str, Any]:
    if raw is None:
        return {}
    ref = _file_ref(raw)
    if ref is not None:
        path = _resolve(conv.base, ref)
        raw = _load_yaml(conv.read(path, "defaultTest"), str(path))
    if not isinstance(raw, dict):
        raise conv.fail("must be a mapping or file://PATH", "defaultTest")
    return raw


def _defaults(
    conv: _Converter, default_test: Mapping[str, Any], vars_: dict[str, Any]
) -> dict[str, Any] | None:
    out: dict[str, Any] = {}
    for key in sorted(set(default_test) - {"vars", "assert", "threshold", "metadata"}, key=str):
        options = default_test.get("options")
        if key == "options" and (options is None or isinstance(options, dict)):
            transform = _options(conv, options or {}, None, "defaultTest.options")
            if transform is not None:
                out["transform"] = transform
        elif key == "options":
            conv.skip(None, "defaultTest.options", "not a mapping of options: not converted")
        else:
            conv.skip(None, f"defaultTest.{key}", "not converted")
    # A list-valued default var is expanded into each test (see _goldens), not kept here.
    scalars = {k: v for k, v in vars_.items() if not _expands(v)}
    if scalars:
        out["vars"] = scalars
    at = _Test(vars_, title="defaultTest")
    asserts = conv.asserts(default_test.get("assert"), at, "defaultTest")
    if asserts:
        out["asserts"] = asserts
    if "threshold" in default_test:
        out["threshold"] = default_test["threshold"]
    return out or None


def _templated(value: Any) -> bool:
    """Whether ``value`` holds a Nunjucks/Jinja2 template anywhere."""
    if isinstance(value, str):
        return "{{" in value or "{%" in value
    if isinstance(value, list):
        return any(_templated(item) for item in value)
    if isinstance(value, dict):
        return any(_templated(item) for item in value.values())
    return False


def _expands(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and isinstance(value[0], str)


def _goldens(
    conv: _Converter,
    test: Mapping[str, Any],
    row_title: str | None,
    index: int,
    count: int,
    defaults_vars: Mapping[str, Any],
    default_meta: Any,
    default_asserts: list[Any],
) -> Iterator[dict[str, Any]]:
    where = f"tests[{index}]"
    title = test.get("description")
    title = title if isinstance(title, str) and title else row_title
    own = conv.vars_of(test.get("vars"), _Test({}, count + 1, title), where)
    # promptfoo expands the merged vars ({...defaultTest.vars, ...test.vars}); a golden keeps
    # only what is its own or differs from the defaults (assay merges the defaults back in).
    merged = {**defaults_vars, **own}
    for combo in _expand(merged):
        count += 1
        combo = _resolved_vars(conv, combo, _Test(combo, count, title), where)
        at = _Test(combo, count, title)
        golden: dict[str, Any] = {"id": ""}
        if title:
            golden["title"] = title
        vars_ = {k: v for k, v in combo.items() if k in own or defaults_vars.get(k) != v}
        for name in _RESERVED[1:]:
            if name in vars_:
                conv.skip(at, f"var {name!r}", "assay reserves this name for the golden")
                del vars_[name]
        # A promptfoo var named input: the golden's input is it, so {{ input }} is the var.
        golden["input"] = vars_.pop("input") if "input" in vars_ else dict(vars_)
        if vars_:
            golden["vars"] = vars_
        asserts = conv.asserts(default_asserts, at, "defaultTest")
        asserts += conv.asserts(test.get("assert"), at, where)
        if asserts:
            golden["asserts"] = asserts
        if "threshold" in test:
            golden["threshold"] = test["threshold"]
        for key in sorted(set(test) - _TEST_KEYS, key=str):
            why = did_you_mean("this test key is not converted", key, _TEST_KEYS, cutoff=0.8)
            conv.skip(at, str(key), why)
        options = test.get("options") or {}
        if not isinstance(options, dict):
            conv.skip(at, "options", "not a mapping of options: not converted")
        elif (transform := _options(conv, options, at, f"{where}.options")) is not None:
            golden["transform"] = transform
        metadata = {
            **(default_meta if isinstance(default_meta, dict) else {}),
            **(test.get("metadata") or {}),
        }
        if "conversationId" in metadata:
            why = "conversation threads (_conversation) are not converted"
            conv.skip(at, "metadata.conversationId", why)
            metadata.pop("conversationId")
        if metadata:
            golden["metadata"] = metadata
        yield golden


def _options(
    conv: _Converter, options: Mapping[str, Any], at: _Test | None, where: str
) -> dict[str, str] | None:
    """A test's (or defaultTest's) options: its output transform as assay's (``transform``,
    or ``postprocess``, its older name, when there is no transform); every other option
    listed."""
    prefix = "options." if at is not None else "defaultTest.options."
    transform = None
    chosen = next((name for name in _TRANSFORM_OPTIONS if name in options), None)
    for option in sorted(options, key=str):
        if option == chosen:
            try:
                transform = conv.transform(options[option], f"{where}.{option}")
            except _Skip as skip:
                conv.skip(at, f"{prefix}{option}", skip.why)
        elif option in _TRANSFORM_OPTIONS:
            conv.skip(at, f"{prefix}{option}", f"promptfoo uses {chosen} instead: ignored")
        else:
            why = _OPTION_WHY.get(str(option), "this option is not converted")
            conv.skip(at, f"{prefix}{option}", why)
    return transform


def _resolved_vars(
    conv: _Converter, vars_: Mapping[str, Any], at: _Test, where: str
) -> dict[str, Any]:
    """The vars as promptfoo's ``renderPrompt`` hands them to the template
    (src/evaluatorHelpers.ts): one trailing newline taken off each text, then
    ``resolveVariables``: in each of up to 5 rounds, each text var's first ``{{ name }}`` of a
    var that exists is replaced by that var's text. A template left in a var after that (a
    filter, an unknown name) is rendered as promptfoo's second Nunjucks pass renders it, or
    listed when it does not render."""
    out = resolve_variables(
        {k: v[:-1] if isinstance(v, str) and v.endswith("\n") else v for k, v in vars_.items()}
    )
    for key, value in out.items():
        if isinstance(value, str) and _templated(value):
            try:
                out[key] = _render(value, out)
            except _Skip as skip:
                conv.skip(at, f"{where}.vars.{key}", f"a var that is a template: {skip.why}")
    return out


def _candidates(
    conv: _Converter,
    prompts: list[dict[str, Any] | None],
    providers: list[_Provider | None],
) -> tuple[dict[str, Any], dict[str, int]]:
    """One candidate per (provider, prompt), numbered as promptfoo numbers its prompt rows."""
    if not any(providers):
        conv.skip(None, "providers", "none converts: candidates.yaml uses echo until you set one")
        providers = [_Provider("echo", {"type": "echo"})]
    usable = [p for p in providers if p is not None]
    first = usable[0].provider
    candidates: list[dict[str, Any]] = []
    rows: dict[str, int] = {}
    for p, named in enumerate(providers):
        if named is None:
            continue
        label, provider = named.name, named.provider
        for i, body in enumerate(prompts):
            if body is None:
                continue
            cid = f"prompt-{i + 1}" if len(usable) == 1 else f"{_slug(label)}-prompt-{i + 1}"
            if cid in rows:
                cid = f"{cid}-{p + 1}"
            candidate: dict[str, Any] = {"id": cid, **body}
            if provider != first:
                # A candidate's provider is merged over the file's: a setting of the first
                # provider this one lacks is cleared (null), or an anthropic candidate would
                # inherit an openai response_format. A copy each: no YAML anchors.
                cleared = {key: None for key in first if key not in provider}
                candidate["provider"] = {**cleared, **provider}
            candidates.append(candidate)
            rows[cid] = p * len(prompts) + i
    if not candidates:
        why = next((s.line() for s in conv.skipped if s.what.startswith("prompts[")), "")
        raise conv.fail(f"no prompt converts ({why})", "prompts")
    return {"provider": first, "candidates": candidates}, rows
