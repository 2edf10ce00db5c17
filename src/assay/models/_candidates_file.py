"""The candidates file: a provider, prompt candidates (templates), repeats.

```yaml
provider: {type: openai, base_url: "http://127.0.0.1:8000/v1", model: m, max_concurrency: 8}
candidates:
  - {id: brief, prompt: "Answer in one short paragraph.\\n{{ input }}"}
  - {id: detailed, prompt: "Answer with details.\\n{{ input.question }}", provider: {model: m2}}
  - id: chat
    system: "You answer in one word."
    messages:
      - {role: user, content: "Capital of Italy?"}
      - {role: assistant, content: "Rome"}
    prompt: "{{ input }}"
repeats: 1
```
A candidate's conversation: ``system`` first (a system message), then ``messages`` (system
messages only at their start), then ``prompt`` as the last user message; a conversation of
one user message is a plain prompt. Every error names the file, the line and the field, and an
unknown key its near miss (``temprature``: did you mean 'temperature'?; ``prompts``, promptfoo's
name: did you mean 'candidates'?).

Templates are Jinja2, sandboxed (:mod:`assay.models._template`), and compiled on load: a syntax
error stops the load. ``prompt``, ``system`` or a message's ``content`` may be ``file://PATH``
(a ``.txt``, ``.md`` or ``.j2`` file whose text is the template) and ``messages`` may be
``file://chat.json`` (or ``.yaml``: a list of ``{role, content}``), PATH relative to the folder
of the file that names it.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from assay import validate as v
from assay.errors import ConfigError
from assay.io import parse_json, read_text, require_regular_file
from assay.models._template import compile_template
from assay.models.providers import (
    OPENAI_COMPATIBLE_TYPES,
    ProviderConfig,
    is_known_provider_type,
    known_provider_types_text,
)
from assay.validate import At, Key

# What the anthropic provider cannot send (the Messages API has no such field).
_NOT_ANTHROPIC = ("seed", "response_format", "presence_penalty", "frequency_penalty")
_SEED_LIMIT = 2**63
# An HTTP header name (RFC 9110 token) and an environment variable name.
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Static headers are written in a file: a name like these holds a secret, which must not be.
_SECRET_NAME = re.compile(r"auth|key|token|secret|passw|cookie|session|credential", re.IGNORECASE)
# Headers assay sets itself.
_RESERVED_HEADERS = frozenset({"content-type", "content-length", "host"})
# The header each chat type puts the api_key_env key in.
_KEY_HEADER = {"openai": "authorization", "anthropic": "x-api-key"}
# The native providers' key headers (vertex: its access token).
_KEY_HEADER.update(
    {"gemini": "x-goog-api-key", "vertex": "authorization", "huggingface": "authorization"}
)
_KEY_HEADER.update({"ollama": "authorization", "replicate": "authorization"})
_KEY_HEADER.update({**dict.fromkeys(OPENAI_COMPATIBLE_TYPES, "authorization"), "azure": "api-key"})

Messages = tuple[tuple[str, str], ...]
ROLES = ("system", "user", "assistant")


@dataclass(frozen=True, slots=True)
class LiveCandidate:
    """One prompt candidate: templates, rendered per golden (a ``file://`` template's text, read
    when the file was loaded).

    Attributes:
        prompt: the prompt template (the last user message), None when ``messages`` says all.
        system: the system prompt template.
        messages: (role, content template) pairs, before ``prompt``.
    """

    id: str
    prompt: str | None
    provider: ProviderConfig
    system: str | None = None
    messages: Messages = ()


@dataclass(frozen=True, slots=True)
class CandidatesFile:
    """A validated candidates file.

    Attributes:
        output_strip: strip surrounding whitespace from every answer before it is scored (off
            by default: some servers pad answers, e.g. llama.cpp's leading space in " Paris").
        notes: what the run should say about the file (e.g. a max_tokens it filled in).
        defaulted: the candidates given :data:`DEFAULT_MAX_TOKENS` (what that note names).
    """

    source: str
    candidates: tuple[LiveCandidate, ...]
    repeats: int
    max_concurrency: int
    output_strip: bool = False
    notes: tuple[str, ...] = ()
    defaulted: tuple[str, ...] = ()


# The native providers (modules google, aws, huggingface, ollama, replicate): the sampling
# settings each API has no field for, and the routing settings each uses (any other one is an
# error: it would be silently ignored).
_NATIVE_TYPES: Final = tuple("gemini vertex bedrock sagemaker huggingface ollama replicate".split())
_NO_PENALTIES: Final = ("response_format", "presence_penalty", "frequency_penalty")
_NATIVE_REFUSE: Final = {
    "gemini": ("response_format",),
    "vertex": ("response_format",),
    "bedrock": ("seed", *_NO_PENALTIES),
    "sagemaker": _NO_PENALTIES,
    "huggingface": _NO_PENALTIES,
    "ollama": ("response_format",),
    "replicate": _NO_PENALTIES,
}


def settings_refused_by(kind: str) -> tuple[str, ...]:
    """The sampling settings ``kind``'s API has no field for (refused on that type; the
    promptfoo importer leaves them out rather than write a file that will not load)."""
    return _NOT_ANTHROPIC if kind == "anthropic" else _NATIVE_REFUSE.get(kind, ())


_ROUTING_KEYS: Final = tuple(
    "deployment api_version project region profile endpoint payload url method body "
    "response_path transform_response command function config".split()
)
_NATIVE_USES: Final = {
    "vertex": ("project", "region"),
    "bedrock": ("region", "profile"),
    "sagemaker": ("region", "profile", "endpoint", "payload"),
}
SAGEMAKER_PAYLOADS: Final = ("huggingface", "openai")  # as assay.models.providers.aws has them

# Without a length limit a model that misses its stop token generates until the timeout (40 s
# a golden at timeout 20 s in the real-model trial); the HTTP providers get this one instead.
DEFAULT_MAX_TOKENS: Final = 1024
_LIMITED_TYPES: Final = ("openai", "anthropic", *_NATIVE_TYPES, *OPENAI_COMPATIBLE_TYPES)


def _seed(value: Any, at: At, key: Key) -> int:
    seed = v.Int().check(value, at, key)
    if not -_SEED_LIMIT <= seed < _SEED_LIMIT:
        at.fail("must be a 64-bit integer", key)
    return seed


def _stop(value: Any, at: At, key: Key) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items:
        at.fail("must be a string or a non-empty list of strings", key)
    return v.List(v.Str(pattern=".+"), indexed=True).check(items, at, key)


def _response_format(value: Any, at: At, key: Key) -> str:
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        at.fail("must be a mapping with a string 'type' (e.g. {type: json_object})", key)
    try:
        return json.dumps(
            value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False
        )
    except (TypeError, ValueError):
        at.fail("must hold only JSON values", key)


def _json_text(value: Any, at: At, key: Key) -> str:
    """A JSON value (the http provider's body template) as its canonical JSON text."""
    try:
        return json.dumps(
            value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False
        )
    except (TypeError, ValueError):
        at.fail("must hold only JSON values", key)


def _json_mapping(value: Any, at: At, key: Key) -> str:
    """A mapping of JSON values (a promptfoo python provider's ``config``) as its JSON text."""
    if not isinstance(value, dict):
        at.fail("must be a mapping", key)
    return _json_text(value, at, key)


def _headers(value: Any, at: At, key: Key) -> tuple[tuple[str, str], ...]:
    """``headers`` (name: value) or ``header_env`` (name: environment variable) as sorted pairs."""
    value = v.Dict(message="must be a mapping of header names to strings").check(value, at, key)
    inner, pairs = at.sub(key), []
    for name, item in value.items():
        if not isinstance(name, str) or not _HEADER_NAME.fullmatch(name):
            inner.fail("not an HTTP header name", str(name))
        if name.lower() in _RESERVED_HEADERS:
            inner.fail("assay sets this header itself", name)
        if key == "header_env":
            if not isinstance(item, str) or not _VARIABLE.fullmatch(item):
                inner.fail("must be the name of an environment variable", name)
        elif _SECRET_NAME.search(name):
            inner.fail(
                "looks like a secret, which a file must not hold: name the environment "
                "variable that holds it in header_env instead",
                name,
            )
        elif not isinstance(item, str) or "\r" in item or "\n" in item:
            inner.fail("must be a one-line string", name)
        pairs.append((name, item))
    return tuple(sorted(pairs))


# Every provider setting (ProviderConfig's fields), declared once.
_PROVIDER: Final = v.Table(
    {
        "type": v.Str(),
        "model": v.Str(),
        "base_url": v.Str(),
        "api_key_env": v.Str(),
        "max_concurrency": v.Int(at_least=1),
        "timeout_s": v.Num(above=0),
        "max_retries": v.Int(at_least=0),
        "temperature": v.Num(at_least=0),
        "max_tokens": v.Int(at_least=0),
        "top_p": v.Num(at_least=0, at_most=1),
        "seed": v.Check(_seed),
        "stop": v.Check(_stop),
        "response_format": v.Check(_response_format),
        "presence_penalty": v.Num(at_least=-2, at_most=2),
        "frequency_penalty": v.Num(at_least=-2, at_most=2),
        "headers": v.Check(_headers),
        "header_env": v.Check(_headers),
        "command": v.Str(),
        "function": v.Str(),
        "cost_per_1k_input": v.Num(at_least=0),
        "cost_per_1k_output": v.Num(at_least=0),
        "deployment": v.Str(),
        "api_version": v.Str(),
        "project": v.Str(),
        "region": v.Str(),
        "profile": v.Str(),
        "endpoint": v.Str(),
        "payload": v.Str(),
        "url": v.Str(),
        "method": v.Str(),
        "body": v.Check(_json_text),
        "response_path": v.Str(),
        "transform_response": v.Str(),
        "config": v.Check(_json_mapping),
    },
    unknown="unknown provider setting (known: {known})",
    null_absent=True,
)


def provider_config(
    raw: Mapping[str, Any], source: str, field: str, base: Mapping[str, Any] | None = None
) -> ProviderConfig:
    """Validate provider settings (``raw`` overriding ``base``).

    Raises:
        ConfigError: naming the file and the field at fault.
    """
    at = At(source, field)
    values = _PROVIDER.check({**(base or {}), **raw}, at)
    kind = values.get("type")
    if not is_known_provider_type(kind):
        at.fail(f"provider type must be one of {known_provider_types_text()}", "type")
    need = {"command": "command", "python": "function"}.get(kind or "")
    if need and not values.get(need):
        at.fail(f"the {kind} provider needs '{need}'", need)
    # A candidate of another type than the file's provider inherits only what its type uses:
    # the rest of the file's settings are left out, not refused (a python provider's
    # ``function`` is no setting of a candidate's gemini provider).
    switched = base is not None and "type" in raw and raw["type"] != base.get("type")
    inherited = set(base or ()) - set(raw) if switched else set()
    if kind == "anthropic":
        _anthropic_rules(values, at, inherited)
    if kind in _NATIVE_TYPES:
        _native_rules(kind, values, at, inherited)
    if kind in (*OPENAI_COMPATIBLE_TYPES, "http", "python", "command", "echo"):
        _compat_rules(kind, values, at, inherited)
    seen: set[str] = set()
    key_header = _KEY_HEADER.get(kind or "") if values.get("api_key_env") else None
    for setting in ("headers", "header_env"):
        for name, _ in values.get(setting, ()):
            if name.lower() in seen:
                at.fail("this header is given twice", f"{setting}.{name}")
            seen.add(name.lower())
            if name.lower() == key_header:
                at.fail(
                    f"the {kind} provider sends the api_key_env key ({values['api_key_env']})"
                    f" as {name}: set one or the other",
                    f"{setting}.{name}",
                )
    return ProviderConfig(**values)


def _native_rules(kind: str, values: dict[str, Any], at: At, inherited: set[str]) -> None:
    """The native providers' rules: the setting each needs, the settings its API has no field
    for (or that belong to another type: a ``project`` on gemini is a vertex setting), refused,
    or left out when ``inherited`` from a provider of another type."""
    uses = _NATIVE_USES.get(kind, ())
    _refuse(kind, values, at, [*_NATIVE_REFUSE.get(kind, ()), *_ROUTING_KEYS], uses, inherited)
    need = "endpoint" if kind == "sagemaker" else "model"
    if not values.get(need):
        at.fail(f"the {kind} provider needs '{need}'", need)
    payload = values.get("payload")
    if payload is not None and payload not in SAGEMAKER_PAYLOADS:
        at.fail(f"must be one of {', '.join(SAGEMAKER_PAYLOADS)}", "payload")


# What each type of the OpenAI-compatible family, http and python uses of the routing settings
# (any other is refused: it would be silently ignored), and what http has no use for.
_HTTP_SETTINGS: Final = ("url", "method", "body", "response_path", "transform_response")
_COMPAT_USES: Final = {"azure": ("deployment", "api_version"), "http": _HTTP_SETTINGS}
_NOT_HTTP: Final = (
    *("model", "base_url", "api_key_env", "temperature", "max_tokens"),
    *("top_p", "seed", "stop", "response_format", "presence_penalty", "frequency_penalty"),
)


def _compat_rules(kind: str, values: dict[str, Any], at: At, inherited: set[str]) -> None:
    """The rules of the OpenAI-compatible types, http and python: the settings each needs, and
    the settings of another type (``url`` is http's, ``deployment`` azure's) refused, or left
    out when ``inherited`` from a provider of another type (a python provider's ``function``
    is no setting of a candidate's openai provider)."""
    uses: tuple[str, ...] = _COMPAT_USES.get(kind, ())
    function = values.get("function") or ""
    if kind == "python" and function.startswith("file://"):
        uses = ("function", "config")
    elif kind in ("python", "command"):
        uses = (kind if kind == "command" else "function",)
    _refuse(
        kind, values, at, [*_ROUTING_KEYS, *(_NOT_HTTP if kind == "http" else ())], uses, inherited
    )
    if kind == "azure":
        for need in ("base_url", "deployment"):
            if not values.get(need):
                example = " (https://RESOURCE.openai.azure.com)" if need == "base_url" else ""
                at.fail(f"the azure provider needs '{need}'{example}", need)
    if kind == "http":
        _http_rules(values, at)


def _http_rules(values: dict[str, Any], at: At) -> None:
    from assay.models.providers.http import METHODS, PathError, parse_path

    url = values.get("url") or ""
    if not url:
        at.fail("the http provider needs 'url'", "url")
    if not url.startswith(("http://", "https://")):
        at.fail("must be an http:// or https:// URL", "url")
    method = values.get("method", "POST").upper()
    if method not in METHODS:
        at.fail(f"must be one of {', '.join(METHODS)}", "method")
    values["method"] = method
    if "response_path" in values and "transform_response" in values:
        at.fail("set response_path or transform_response, not both", "transform_response")
    try:
        if "response_path" in values:
            parse_path(values["response_path"])
    except PathError as exc:
        at.fail(str(exc), "response_path")
    transform = values.get("transform_response", "file://x.py:f").removeprefix("file://")
    path, _, name = transform.rpartition(":")
    if not path.endswith(".py") or not name.isidentifier():
        at.fail("must name a function in a python file: 'parse.py:function'", "transform_response")
    if "body" in values:
        _body_templates(json.loads(values["body"]), at)


def _body_templates(value: Any, at: At) -> None:
    """Compile every string of the http provider's body: a syntax error stops the load."""
    if isinstance(value, str):
        compile_template(value, source=at.source, field=at.path("body"))
    elif isinstance(value, list):
        for item in value:
            _body_templates(item, at)
    elif isinstance(value, dict):
        for item in value.values():
            _body_templates(item, at)


def _refuse(
    kind: str,
    values: dict[str, Any],
    at: At,
    settings: Sequence[str],
    uses: Sequence[str],
    inherited: set[str],
) -> None:
    """Refuse each of ``settings`` that ``kind`` does not use; one ``inherited`` from the
    file's provider of another type is left out instead."""
    for key in settings:
        if key in values and key not in uses:
            if key not in inherited:
                at.fail(f"the {kind} provider does not support '{key}'", key)
            del values[key]


def _anthropic_rules(values: dict[str, Any], at: At, inherited: set[str]) -> None:
    _refuse("anthropic", values, at, [*_NOT_ANTHROPIC, *_ROUTING_KEYS], (), inherited)
    if values.get("temperature", 0.0) > 1:
        at.fail("must be a number between 0 and 1 for anthropic", "temperature")
    if values.get("max_tokens") == 0:
        at.fail("must be an integer >= 1 for anthropic", "max_tokens")


# ``file://PATH`` in place of a template (or of a whole messages list): the file's content,
# PATH relative to the folder of the file that names it, as promptfoo reads prompts.
FILE_PREFIX: Final = "file://"
_TEMPLATE_SUFFIXES: Final = (".txt", ".md", ".j2")
_CHAT_SUFFIXES: Final = (".json", ".yaml", ".yml")


def _read_named_file(
    value: str, base: Path, suffixes: tuple[str, ...], kind: str, at: At, key: Key
) -> tuple[Path, str]:
    """The path and UTF-8 text of the file a ``file://`` value names; one that is not a
    regular file (a FIFO or device, even behind a symlink: reading it could block the run) is
    refused like a missing one, naming the candidates file and field."""
    name = value[len(FILE_PREFIX) :]
    if not name:
        at.fail(f"{FILE_PREFIX} needs a path after it", key)
    if not name.lower().endswith(suffixes):
        hint = ""
        if suffixes is _TEMPLATE_SUFFIXES and name.lower().endswith(_CHAT_SUFFIXES):
            hint = " (a chat file of {role, content} messages goes in 'messages')"
        at.fail(f"{value}: a {kind} file must end in {', '.join(suffixes)}{hint}", key)
    path = base / name  # an absolute name stays absolute
    try:
        if not os.path.lexists(path):
            raise ConfigError("file not found", source=str(path))
        require_regular_file(path, ConfigError)
        return path, read_text(path, ConfigError)
    except ConfigError as exc:
        at.fail(f"{value}: {exc.message} (at {path})", key)


def _template(
    value: Any, required: str, base: Path, at: At, key: Key, origin: str | None = None
) -> str:
    """A template field's text (its file's content for ``file://PATH``), compiled now so that a
    syntax error stops the load, not the run at its first golden. ``required`` is the message
    for a value that is not a non-empty string, ``origin`` the chat file it was read from."""
    if not isinstance(value, str) or not value:
        at.fail(required + (f" (in {origin})" if origin else ""), key)
    source, field = at.source, at.path(key)
    if not value.startswith(FILE_PREFIX):
        compile_template(value, source=source, field=field, origin=origin)
        return value
    path, text = _read_named_file(value, base, _TEMPLATE_SUFFIXES, "template", at, key)
    if not text:
        at.fail(f"{value}: the file is empty (at {path}): {required}", key)
    compile_template(text, source=source, field=field, origin=value)
    return text


def _chat_file(value: str, base: Path, at: At, key: Key) -> tuple[Any, Path]:
    """The messages list a ``messages: file://chat.json`` (or ``.yaml``) holds, promptfoo's chat
    prompt format, and the folder its own ``file://`` contents are relative to."""
    path, text = _read_named_file(value, base, _CHAT_SUFFIXES, "chat", at, key)
    try:
        if path.suffix.lower() == ".json":
            data = parse_json(text, str(path), ConfigError)
        else:
            from assay._yaml import yaml_load

            data = yaml_load(text, str(path), error=ConfigError)
    except ConfigError as exc:
        at.fail(f"{value}: {exc}", key)
    return data, path.parent


_MESSAGE: Final = v.Table(
    {
        "role": v.Str(choices=ROLES, message=f"must be one of {', '.join(ROLES)}", required=True),
        "content": v.Spec(),
    },
    unknown="unknown message setting",
    message="must be a mapping {role, content}",
)


def _messages(raw: Any, system: str | None, at: At, base: Path) -> Messages:
    """A candidate's ``messages`` (or the ``file://`` chat file's): each a {role, content}
    mapping, the content a template; system messages first, and only without ``system``."""
    chat_file, origin = None, ""
    if isinstance(raw, str) and raw.startswith(FILE_PREFIX):
        chat_file, origin = raw, f" (in {raw})"
        raw, base = _chat_file(raw, base, at, "messages")
    if not isinstance(raw, list) or not raw:
        at.fail("must be a non-empty list of {role, content}" + origin, "messages")
    inner, messages = at.sub("messages"), list[tuple[str, str]]()
    for i, message in enumerate(raw):
        try:
            role = _MESSAGE.check(message, inner, i)["role"]
        except ConfigError as exc:  # the chat file the message is in, named in the message
            raise ConfigError(exc.message + origin, source=exc.source, field=exc.field) from None
        here = inner.sub(i)
        required = "a non-empty content template is required"
        content = _template(message.get("content"), required, base, here, "content", chat_file)
        if role == "system" and system is not None:
            here.fail("give the system prompt once: 'system' or a system message" + origin, "role")
        if role == "system" and any(r != "system" for r, _ in messages):
            here.fail("system messages come before the others" + origin, "role")
        messages.append((role, content))
    return tuple(messages)


def _conversation(
    values: Mapping[str, Any], at: At, base: Path
) -> tuple[str | None, str | None, Messages]:
    """A candidate's ``prompt``, ``system`` and ``messages``, validated by the rule: at least
    one user message in all; ``system`` or leading system messages, not both; system messages
    only before the others. Each template is compiled (a syntax error is an error now), and a
    ``file://`` value is replaced by its file's text."""
    prompt, system = values.get("prompt"), values.get("system")
    if prompt is not None:
        prompt = _template(prompt, "a non-empty prompt template is required", base, at, "prompt")
    if system is not None:
        system = _template(system, "must be a non-empty template", base, at, "system")
    messages = _messages(values["messages"], system, at, base) if "messages" in values else ()
    if prompt is None and not any(role == "user" for role, _ in messages):
        at.fail(
            "a prompt template (or messages with a user message) is required",
            "messages" if "messages" in values else "prompt",
        )
    return prompt, system, messages


_CANDIDATE: Final = v.Table(
    {
        "id": v.Str(pattern=".+", message="a non-empty string id is required", required=True),
        "prompt": v.Spec(),
        "system": v.Spec(),
        "messages": v.Spec(),
        "provider": v.Dict(),
    },
    unknown="unknown candidate setting",
    # A promptfoo prompt's names for them ({label, raw}).
    also={"label": "id", "raw": "prompt"},
    null_absent=True,
    message="each candidate must be a mapping",
)
_AT_LEAST_ONE: Final = "must be an integer >= 1"
# The file's keys; a promptfoo config's names of two of them are suggested for them.
_FILE: Final = v.Table(
    {
        "provider": v.Dict(message="a provider mapping is required", required=True),
        "candidates": v.List(non_empty=True, message="a non-empty list is required", required=True),
        "repeats": v.Int(at_least=1, message=_AT_LEAST_ONE),
        "max_concurrency": v.Int(at_least=1, message=_AT_LEAST_ONE),
        "output_strip": v.Bool(),
    },
    unknown="unknown setting",
    also={"prompts": "candidates", "providers": "provider"},
    message="a candidates file must be a mapping",
)


def load_candidates_file(path: Path) -> CandidatesFile:
    """Read and validate a candidates file.

    Raises:
        ConfigError: naming the file, the line and the field at fault (a near miss of a key
            that is not one suggests the key: ``temprature``, ``promt``, ``prompts``).
    """
    from assay._yaml import field_line, yaml_load

    source = str(path)
    text = read_text(path, ConfigError, missing="candidates file not found")
    data = yaml_load(text, source, error=ConfigError)
    try:
        return _candidates(data, At(source), path.parent)
    except ConfigError as exc:
        if exc.source != source:
            raise
        raise v.located(exc, field_line(text, exc.field or "")) from None


def _candidates(data: Any, at: At, base: Path) -> CandidatesFile:
    top = _FILE.check(data, at)
    candidates: list[LiveCandidate] = []
    defaulted: list[str] = []  # HTTP providers given DEFAULT_MAX_TOKENS, said in a note
    for i, raw in enumerate(top["candidates"]):
        values = _CANDIDATE.check(raw, at.sub("candidates"), i)
        here = at.sub(f"candidates[{i}]")
        cid = values["id"]
        if any(c.id == cid for c in candidates):
            here.fail(f"duplicate candidate id {cid!r}", "id")
        prompt, system, messages = _conversation(values, here, base)
        override = values.get("provider") or {}
        where = here.path("provider") if override else "provider"
        config = provider_config(override, at.source or "", where, top["provider"])
        if config.type in _LIMITED_TYPES and config.max_tokens is None:
            config = replace(config, max_tokens=DEFAULT_MAX_TOKENS)
            defaulted.append(cid)
        candidates.append(LiveCandidate(cid, prompt, config, system, messages))
    return CandidatesFile(
        at.source or "",
        tuple(candidates),
        top.get("repeats", 1),
        top.get("max_concurrency", 64),
        top.get("output_strip", False),
        _max_tokens_notes(defaulted),
        tuple(defaulted),
    )


def _max_tokens_notes(defaulted: Sequence[str]) -> tuple[str, ...]:
    if not defaulted:
        return ()
    return (
        f"no max_tokens set for {', '.join(defaulted)}: {DEFAULT_MAX_TOKENS} used (set "
        "max_tokens in the provider; without a limit a model that misses its stop token "
        "generates until the timeout)",
    )


def select_candidates(spec: CandidatesFile, ids: Sequence[str]) -> CandidatesFile:
    """``spec`` with only the candidates ``ids`` (``assay eval --candidate``), in the file's
    order; no ids: all of them.

    Raises:
        ConfigError: an id the file does not have, naming the file, the ids it has and the
            near miss (``brif``: did you mean 'brief'?).
    """
    if not ids:
        return spec
    known = [c.id for c in spec.candidates]
    for cid in ids:
        if cid not in known:
            message = f"no candidate {cid!r} in the candidates file (it has {', '.join(known)})"
            raise ConfigError(
                v.did_you_mean(message, cid, known), source=spec.source, field="--candidate"
            )
    kept = tuple(c for c in spec.candidates if c.id in set(ids))
    defaulted = tuple(cid for cid in spec.defaulted if cid in set(ids))
    other_notes = tuple(n for n in spec.notes if n not in _max_tokens_notes(spec.defaulted))
    return replace(
        spec,
        candidates=kept,
        notes=_max_tokens_notes(defaulted) + other_notes,
        defaulted=defaulted,
    )
