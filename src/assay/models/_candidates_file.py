"""The candidates file: a provider, prompt candidates (templates), repeats.

```yaml
provider: {type: openai, base_url: "http://127.0.0.1:8000/v1", model: m, max_concurrency: 8}
candidates:
  - {id: brief, prompt: "Answer in one short paragraph.\\n{{ input }}"}
  - {id: detailed, prompt: "Answer with details.\\n{{ input.question }}", provider: {model: m2}}
repeats: 1
```
Every error names the file and the field.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


@dataclass(frozen=True, slots=True)
class LiveCandidate:
    id: str
    prompt: str
    provider: ProviderConfig


@dataclass(frozen=True, slots=True)
class CandidatesFile:
    source: str
    candidates: tuple[LiveCandidate, ...]
    repeats: int
    max_concurrency: int


def provider_config(
    raw: Mapping[str, Any], source: str, field: str, base: Mapping[str, Any] | None = None
) -> ProviderConfig:
    """Validate provider settings (``raw`` overriding ``base``).

    Raises:
        ConfigError: naming the file and the field at fault.
    """
    merged = {**(base or {}), **raw}
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
        if key in _INTS:
            validate.integer(value, source=source, field=where, at_least=0)
        elif key in _NUMBERS:
            validate.number(value, source=source, field=where, at_least=0)
        elif key in _STRINGS:
            validate.string(value, source=source, field=where)
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
    needs = {"openai": "base_url", "command": "command", "python": "function"}
    need = needs.get(merged["type"])
    if need and not merged.get(need):
        raise ConfigError(
            f"the {merged['type']} provider needs '{need}'", source=source, field=f"{field}.{need}"
        )
    values = {k: v for k, v in merged.items() if v is not None}
    for key in _NUMBERS:
        if key in values:
            values[key] = float(values[key])
    return ProviderConfig(**values)


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
    unknown = set(data) - {"provider", "candidates", "repeats", "max_concurrency"}
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
    candidates: list[LiveCandidate] = []
    seen: set[str] = set()
    for i, raw in enumerate(raw_candidates):
        field = f"candidates[{i}]"
        if not isinstance(raw, dict):
            raise ConfigError("each candidate must be a mapping", source=source, field=field)
        extra = set(raw) - {"id", "prompt", "provider"}
        if extra:
            raise ConfigError(
                "unknown candidate setting", source=source, field=f"{field}.{sorted(extra)[0]}"
            )
        cid, prompt = raw.get("id"), raw.get("prompt")
        if not isinstance(cid, str) or not cid:
            raise ConfigError(
                "a non-empty string id is required", source=source, field=f"{field}.id"
            )
        if cid in seen:
            raise ConfigError(f"duplicate candidate id {cid!r}", source=source, field=f"{field}.id")
        seen.add(cid)
        if not isinstance(prompt, str) or not prompt:
            raise ConfigError(
                "a non-empty prompt template is required", source=source, field=f"{field}.prompt"
            )
        override = raw.get("provider") or {}
        if not isinstance(override, dict):
            raise ConfigError("must be a mapping", source=source, field=f"{field}.provider")
        where = f"{field}.provider" if override else "provider"
        config = provider_config(override, source, where, base)
        candidates.append(LiveCandidate(cid, prompt, config))
    return CandidatesFile(source, tuple(candidates), repeats, limit)
