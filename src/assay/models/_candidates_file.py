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
one user message is a plain prompt. Every error names the file and the field.

Templates are Jinja2, sandboxed (:mod:`assay.models._template`), and compiled on load: a syntax
error stops the load. ``prompt``, ``system`` or a message's ``content`` may be ``file://PATH``
(a ``.txt``, ``.md`` or ``.j2`` file whose text is the template) and ``messages`` may be
``file://chat.json`` (or ``.yaml``: a list of ``{role, content}``), PATH relative to the folder
of the file that names it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from assay import validate
from assay.errors import ConfigError
from assay.io import parse_json, read_text, require_regular_file
from assay.models._template import compile_template
from assay.models.providers import (
    ProviderConfig,
    is_known_provider_type,
    known_provider_types_text,
)

_FIELDS = {f.name: f for f in dataclasses.fields(ProviderConfig)}
_INTS = ("max_concurrency", "max_retries", "max_tokens")
_NUMBERS = ("timeout_s", "temperature", "cost_per_1k_input", "cost_per_1k_output")
_STRINGS = ("type", "model", "base_url", "api_key_env", "command", "function")
# Sampling settings with a range: (lowest, highest).
_RANGES = {"top_p": (0.0, 1.0), "presence_penalty": (-2.0, 2.0), "frequency_penalty": (-2.0, 2.0)}
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
    """

    source: str
    candidates: tuple[LiveCandidate, ...]
    repeats: int
    max_concurrency: int
    output_strip: bool = False
    notes: tuple[str, ...] = ()


# Without a length limit a model that misses its stop token generates until the timeout (40 s
# a golden at timeout 20 s in the real-model trial); the HTTP providers get this one instead.
DEFAULT_MAX_TOKENS: Final = 1024
_LIMITED_TYPES: Final = ("openai", "anthropic")


def provider_config(
    raw: Mapping[str, Any], source: str, field: str, base: Mapping[str, Any] | None = None
) -> ProviderConfig:
    """Validate provider settings (``raw`` overriding ``base``).

    Raises:
        ConfigError: naming the file and the field at fault.
    """
    merged = {**(base or {}), **raw}
    values: dict[str, Any] = {}
    for key, value in merged.items():
        where = f"{field}.{key}"
        if key not in _FIELDS:
            raise ConfigError(
                f"unknown provider setting (known: {', '.join(sorted(_FIELDS))})",
                source=source,
                field=where,
            )
        if value is None:
            continue
        values[key] = _setting(key, value, source, where)
    if not is_known_provider_type(merged.get("type")):
        raise ConfigError(
            f"provider type must be one of {known_provider_types_text()}",
            source=source,
            field=f"{field}.type",
        )
    if merged.get("max_concurrency") is not None:
        validate.integer(
            merged["max_concurrency"], source=source, field=f"{field}.max_concurrency", at_least=1
        )
    if merged.get("timeout_s") is not None:
        validate.number(merged["timeout_s"], source=source, field=f"{field}.timeout_s", above=0)
    kind = merged["type"]
    needs = {"command": "command", "python": "function"}
    need = needs.get(kind)
    if need and not merged.get(need):
        raise ConfigError(
            f"the {kind} provider needs '{need}'", source=source, field=f"{field}.{need}"
        )
    if kind == "anthropic":
        _anthropic_rules(values, source, field)
    _check_header_names(values, source, field)
    config = ProviderConfig(**values)
    key_header = _KEY_HEADER.get(kind)
    if config.api_key_env and key_header is not None:
        for setting in ("headers", "header_env"):
            for name, _ in values.get(setting, ()):
                if name.lower() == key_header:
                    raise ConfigError(
                        f"the {kind} provider sends the api_key_env key ({config.api_key_env})"
                        f" as {name}: set one or the other",
                        source=source,
                        field=f"{field}.{setting}.{name}",
                    )
    return config


def _setting(key: str, value: Any, source: str, where: str) -> Any:
    """One provider setting, validated and in the form ProviderConfig holds."""
    if key in _INTS:
        return validate.integer(value, source=source, field=where, at_least=0)
    if key in _NUMBERS:
        return validate.number(value, source=source, field=where, at_least=0)
    if key in _STRINGS:
        return validate.string(value, source=source, field=where)
    if key in _RANGES:
        low, high = _RANGES[key]
        return validate.number(value, source=source, field=where, at_least=low, at_most=high)
    if key == "seed":
        seed = validate.integer(value, source=source, field=where)
        if not -_SEED_LIMIT <= seed < _SEED_LIMIT:
            raise ConfigError("must be a 64-bit integer", source=source, field=where)
        return seed
    if key == "stop":
        return _stop(value, source, where)
    if key == "response_format":
        return _response_format(value, source, where)
    if key == "headers":
        return _headers(value, source, where, secret_values=False)
    if key == "header_env":
        return _headers(value, source, where, secret_values=True)
    return value  # pragma: no cover - every field is handled above


def _stop(value: Any, source: str, where: str) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items:
        raise ConfigError(
            "must be a string or a non-empty list of strings", source=source, field=where
        )
    for i, item in enumerate(items):
        if not isinstance(item, str) or not item:
            raise ConfigError("must be a non-empty string", source=source, field=f"{where}[{i}]")
    return tuple(items)


def _response_format(value: Any, source: str, where: str) -> str:
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        raise ConfigError(
            "must be a mapping with a string 'type' (e.g. {type: json_object})",
            source=source,
            field=where,
        )
    try:
        return json.dumps(
            value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False
        )
    except (TypeError, ValueError):
        raise ConfigError("must hold only JSON values", source=source, field=where) from None


def _headers(
    value: Any, source: str, where: str, *, secret_values: bool
) -> tuple[tuple[str, str], ...]:
    """``headers`` (name: value) or ``header_env`` (name: environment variable) as sorted pairs."""
    if not isinstance(value, dict):
        raise ConfigError(
            "must be a mapping of header names to strings", source=source, field=where
        )
    pairs = []
    for name, item in value.items():
        at = f"{where}.{name}"
        if not isinstance(name, str) or not _HEADER_NAME.fullmatch(name):
            raise ConfigError("not an HTTP header name", source=source, field=at)
        if name.lower() in _RESERVED_HEADERS:
            raise ConfigError("assay sets this header itself", source=source, field=at)
        if secret_values:
            if not isinstance(item, str) or not _VARIABLE.fullmatch(item):
                raise ConfigError(
                    "must be the name of an environment variable", source=source, field=at
                )
        else:
            if _SECRET_NAME.search(name):
                raise ConfigError(
                    "looks like a secret, which a file must not hold: name the environment "
                    "variable that holds it in header_env instead",
                    source=source,
                    field=at,
                )
            if not isinstance(item, str) or "\r" in item or "\n" in item:
                raise ConfigError("must be a one-line string", source=source, field=at)
        pairs.append((name, item))
    return tuple(sorted(pairs))


def _check_header_names(values: Mapping[str, Any], source: str, field: str) -> None:
    seen: set[str] = set()
    for setting in ("headers", "header_env"):
        for name, _ in values.get(setting, ()):
            if name.lower() in seen:
                raise ConfigError(
                    "this header is given twice", source=source, field=f"{field}.{setting}.{name}"
                )
            seen.add(name.lower())


def _anthropic_rules(values: Mapping[str, Any], source: str, field: str) -> None:
    for key in _NOT_ANTHROPIC:
        if key in values:
            raise ConfigError(
                f"the anthropic provider does not support '{key}'",
                source=source,
                field=f"{field}.{key}",
            )
    if values.get("temperature", 0.0) > 1:
        raise ConfigError(
            "must be a number between 0 and 1 for anthropic",
            source=source,
            field=f"{field}.temperature",
        )
    if values.get("max_tokens") == 0:
        raise ConfigError(
            "must be an integer >= 1 for anthropic", source=source, field=f"{field}.max_tokens"
        )


# ``file://PATH`` in place of a template (or of a whole messages list): the file's content,
# PATH relative to the folder of the file that names it, as promptfoo reads prompts.
FILE_PREFIX: Final = "file://"
_TEMPLATE_SUFFIXES: Final = (".txt", ".md", ".j2")
_CHAT_SUFFIXES: Final = (".json", ".yaml", ".yml")


def _read_named_file(
    value: str, base: Path, suffixes: tuple[str, ...], kind: str, source: str, field: str
) -> tuple[Path, str]:
    """The path and UTF-8 text of the file a ``file://`` value names.

    Raises:
        ConfigError: naming the candidates file and field: no path, a suffix not in
            ``suffixes``, a missing file, one that is not a regular file (a FIFO or device,
            even behind a symlink: reading it could block the run), or unreadable text.
    """
    name = value[len(FILE_PREFIX) :]
    if not name:
        raise ConfigError(f"{FILE_PREFIX} needs a path after it", source=source, field=field)
    if not name.lower().endswith(suffixes):
        hint = ""
        if suffixes is _TEMPLATE_SUFFIXES and name.lower().endswith(_CHAT_SUFFIXES):
            hint = " (a chat file of {role, content} messages goes in 'messages')"
        raise ConfigError(
            f"{value}: a {kind} file must end in {', '.join(suffixes)}{hint}",
            source=source,
            field=field,
        )
    path = base / name  # an absolute name stays absolute
    try:
        if not os.path.lexists(path):
            raise ConfigError("file not found", source=str(path))
        require_regular_file(path, ConfigError)
        return path, read_text(path, ConfigError)
    except ConfigError as exc:
        raise ConfigError(
            f"{value}: {exc.message} (at {path})", source=source, field=field
        ) from None


def _template(
    value: Any, *, required: str, base: Path, source: str, field: str, origin: str | None = None
) -> str:
    """A template field's text (its file's content for ``file://PATH``), compiled now so that a
    syntax error stops the load, not the run at its first golden.

    Args:
        required: the message for a value that is not a non-empty string.
        origin: the ``file://`` chat file a message's content was read from, named in errors.

    Raises:
        ConfigError: naming the file and field.
    """
    if not isinstance(value, str) or not value:
        in_file = f" (in {origin})" if origin else ""
        raise ConfigError(required + in_file, source=source, field=field)
    if not value.startswith(FILE_PREFIX):
        compile_template(value, source=source, field=field, origin=origin)
        return value
    path, text = _read_named_file(value, base, _TEMPLATE_SUFFIXES, "template", source, field)
    if not text:
        raise ConfigError(
            f"{value}: the file is empty (at {path}): {required}", source=source, field=field
        )
    compile_template(text, source=source, field=field, origin=value)
    return text


def _chat_file(value: str, base: Path, source: str, field: str) -> tuple[Any, Path]:
    """The messages list a ``messages: file://chat.json`` (or ``.yaml``) holds, promptfoo's chat
    prompt format, and the folder its own ``file://`` contents are relative to."""
    path, text = _read_named_file(value, base, _CHAT_SUFFIXES, "chat", source, field)
    try:
        if path.suffix.lower() == ".json":
            data = parse_json(text, str(path), ConfigError)
        else:
            from assay._yaml import yaml_load

            data = yaml_load(text, str(path), error=ConfigError)
    except ConfigError as exc:
        raise ConfigError(f"{value}: {exc}", source=source, field=field) from None
    return data, path.parent


def _conversation(
    raw: Mapping[str, Any], source: str, field: str, base: Path
) -> tuple[str | None, str | None, Messages]:
    """A candidate's ``prompt``, ``system`` and ``messages``, validated by the rule: at least
    one user message in all; ``system`` or leading system messages, not both; system messages
    only before the others. Each template is compiled (a syntax error is an error now), and a
    ``file://`` value is replaced by its file's text."""
    prompt, system, raw_messages = raw.get("prompt"), raw.get("system"), raw.get("messages")
    if prompt is not None:
        prompt = _template(
            prompt,
            required="a non-empty prompt template is required",
            base=base,
            source=source,
            field=f"{field}.prompt",
        )
    if system is not None:
        system = _template(
            system,
            required="must be a non-empty template",
            base=base,
            source=source,
            field=f"{field}.system",
        )
    messages: list[tuple[str, str]] = []
    if raw_messages is not None:
        chat_file, origin, messages_base = None, "", base
        if isinstance(raw_messages, str) and raw_messages.startswith(FILE_PREFIX):
            chat_file, origin = raw_messages, f" (in {raw_messages})"
            raw_messages, messages_base = _chat_file(
                raw_messages, base, source, f"{field}.messages"
            )
        if not isinstance(raw_messages, list) or not raw_messages:
            raise ConfigError(
                "must be a non-empty list of {role, content}" + origin,
                source=source,
                field=f"{field}.messages",
            )
        for i, message in enumerate(raw_messages):
            at = f"{field}.messages[{i}]"
            if not isinstance(message, dict):
                raise ConfigError(
                    "must be a mapping {role, content}" + origin, source=source, field=at
                )
            extra = sorted(set(message) - {"role", "content"}, key=str)
            if extra:
                raise ConfigError(
                    "unknown message setting" + origin, source=source, field=f"{at}.{extra[0]}"
                )
            role = message.get("role")
            if role not in ROLES:
                raise ConfigError(
                    f"must be one of {', '.join(ROLES)}{origin}",
                    source=source,
                    field=f"{at}.role",
                )
            content = _template(
                message.get("content"),
                required="a non-empty content template is required",
                base=messages_base,
                source=source,
                field=f"{at}.content",
                origin=chat_file,
            )
            if role == "system":
                if system is not None:
                    raise ConfigError(
                        "give the system prompt once: 'system' or a system message" + origin,
                        source=source,
                        field=f"{at}.role",
                    )
                if any(r != "system" for r, _ in messages):
                    raise ConfigError(
                        "system messages come before the others" + origin,
                        source=source,
                        field=f"{at}.role",
                    )
            messages.append((role, content))
    if prompt is None and not any(role == "user" for role, _ in messages):
        field_at = f"{field}.messages" if raw_messages is not None else f"{field}.prompt"
        raise ConfigError(
            "a prompt template (or messages with a user message) is required",
            source=source,
            field=field_at,
        )
    return prompt, system, tuple(messages)


def load_candidates_file(path: Path) -> CandidatesFile:
    """Read and validate a candidates file.

    Raises:
        ConfigError: naming the file and field at fault.
    """
    from assay._yaml import yaml_load

    source = str(path)
    text = read_text(path, ConfigError, missing="candidates file not found")
    data = yaml_load(text, source, error=ConfigError)
    if not isinstance(data, dict):
        raise ConfigError("a candidates file must be a mapping", source=source)
    unknown = set(data) - {"provider", "candidates", "repeats", "max_concurrency", "output_strip"}
    if unknown:
        raise ConfigError("unknown setting", source=source, field=sorted(unknown)[0])
    base = data.get("provider")
    if not isinstance(base, dict):
        raise ConfigError("a provider mapping is required", source=source, field="provider")
    raw_candidates = data.get("candidates")
    if not isinstance(raw_candidates, list) or not raw_candidates:
        raise ConfigError("a non-empty list is required", source=source, field="candidates")
    repeats = data.get("repeats", 1)
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ConfigError("must be an integer >= 1", source=source, field="repeats")
    limit = data.get("max_concurrency", 64)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ConfigError("must be an integer >= 1", source=source, field="max_concurrency")
    output_strip = data.get("output_strip", False)
    if not isinstance(output_strip, bool):
        raise ConfigError("must be true or false", source=source, field="output_strip")
    candidates: list[LiveCandidate] = []
    seen: set[str] = set()
    for i, raw in enumerate(raw_candidates):
        field = f"candidates[{i}]"
        if not isinstance(raw, dict):
            raise ConfigError("each candidate must be a mapping", source=source, field=field)
        extra = set(raw) - {"id", "prompt", "system", "messages", "provider"}
        if extra:
            raise ConfigError(
                "unknown candidate setting", source=source, field=f"{field}.{sorted(extra)[0]}"
            )
        cid = raw.get("id")
        if not isinstance(cid, str) or not cid:
            raise ConfigError(
                "a non-empty string id is required", source=source, field=f"{field}.id"
            )
        if cid in seen:
            raise ConfigError(f"duplicate candidate id {cid!r}", source=source, field=f"{field}.id")
        seen.add(cid)
        prompt, system, messages = _conversation(raw, source, field, path.parent)
        override = raw.get("provider") or {}
        if not isinstance(override, dict):
            raise ConfigError("must be a mapping", source=source, field=f"{field}.provider")
        where = f"{field}.provider" if override else "provider"
        config = provider_config(override, source, where, base)
        candidates.append(LiveCandidate(cid, prompt, config, system, messages))
    candidates, notes = _default_max_tokens(candidates)
    return CandidatesFile(source, tuple(candidates), repeats, limit, output_strip, notes)


def _default_max_tokens(
    candidates: list[LiveCandidate],
) -> tuple[list[LiveCandidate], tuple[str, ...]]:
    """Give an HTTP provider with no ``max_tokens`` the default, and say so."""
    out = []
    defaulted = []
    for candidate in candidates:
        config = candidate.provider
        if config.type in _LIMITED_TYPES and config.max_tokens is None:
            candidate = replace(candidate, provider=replace(config, max_tokens=DEFAULT_MAX_TOKENS))
            defaulted.append(candidate.id)
        out.append(candidate)
    if not defaulted:
        return out, ()
    note = (
        f"no max_tokens set for {', '.join(defaulted)}: {DEFAULT_MAX_TOKENS} used (set "
        "max_tokens in the provider; without a limit a model that misses its stop token "
        "generates until the timeout)"
    )
    return out, (note,)
