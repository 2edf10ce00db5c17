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
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from assay import validate
from assay.errors import ConfigError
from assay.io import read_text
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
    """One prompt candidate: templates, rendered per golden.

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


def _conversation(
    raw: Mapping[str, Any], source: str, field: str
) -> tuple[str | None, str | None, Messages]:
    """A candidate's ``prompt``, ``system`` and ``messages``, validated by the rule: at least
    one user message in all; ``system`` or leading system messages, not both; system messages
    only before the others."""
    prompt, system, raw_messages = raw.get("prompt"), raw.get("system"), raw.get("messages")
    if prompt is not None and (not isinstance(prompt, str) or not prompt):
        raise ConfigError(
            "a non-empty prompt template is required", source=source, field=f"{field}.prompt"
        )
    if system is not None and (not isinstance(system, str) or not system):
        raise ConfigError("must be a non-empty template", source=source, field=f"{field}.system")
    messages: list[tuple[str, str]] = []
    if raw_messages is not None:
        if not isinstance(raw_messages, list) or not raw_messages:
            raise ConfigError(
                "must be a non-empty list of {role, content}",
                source=source,
                field=f"{field}.messages",
            )
        for i, message in enumerate(raw_messages):
            at = f"{field}.messages[{i}]"
            if not isinstance(message, dict):
                raise ConfigError("must be a mapping {role, content}", source=source, field=at)
            extra = sorted(set(message) - {"role", "content"}, key=str)
            if extra:
                raise ConfigError(
                    "unknown message setting", source=source, field=f"{at}.{extra[0]}"
                )
            role, content = message.get("role"), message.get("content")
            if role not in ROLES:
                raise ConfigError(
                    f"must be one of {', '.join(ROLES)}", source=source, field=f"{at}.role"
                )
            if not isinstance(content, str) or not content:
                raise ConfigError(
                    "a non-empty content template is required",
                    source=source,
                    field=f"{at}.content",
                )
            if role == "system":
                if system is not None:
                    raise ConfigError(
                        "give the system prompt once: 'system' or a system message",
                        source=source,
                        field=f"{at}.role",
                    )
                if any(r != "system" for r, _ in messages):
                    raise ConfigError(
                        "system messages come before the others",
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
        prompt, system, messages = _conversation(raw, source, field)
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
