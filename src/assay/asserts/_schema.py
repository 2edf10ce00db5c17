"""JSON Schema validation with the ``jsonschema`` library (full, not a subset).

Draft 2020-12 unless ``$schema`` names another known draft; an unknown ``$schema`` or an invalid
schema is a bad argument. Each violation becomes one issue ``{path, reason, message}`` where
``reason`` is the failing keyword and ``path`` the JSON Pointer of the failing value; for
``required`` and ``additionalProperties`` the path names the missing or extra property, one issue
per property, as the TypeScript helper does.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from ..pointer import escape_token
from ._result import ArgumentProblem

_UNKNOWN = object()
_BY_REPR: dict[tuple[str, int], tuple[Any, Any]] = {}


def _pointer(parts: Any) -> str:
    return "".join("/" + escape_token(str(p)) for p in parts)


@lru_cache(maxsize=512)
def _validator(schema_json: str, registry_id: int, registry: Any) -> Any:
    from jsonschema import Draft202012Validator, exceptions
    from jsonschema.validators import validator_for

    schema = json.loads(schema_json)
    if isinstance(schema, dict):
        cls = validator_for(schema, default=_UNKNOWN)  # type: ignore[arg-type]
        if cls is _UNKNOWN:
            if "$schema" in schema:
                raise ArgumentProblem(f"unknown $schema {schema['$schema']!r}")
            cls = Draft202012Validator
    elif isinstance(schema, bool):
        cls = Draft202012Validator
    else:
        raise ArgumentProblem("a JSON Schema must be an object or a boolean")
    try:
        cls.check_schema(schema)
    except exceptions.SchemaError as exc:
        raise ArgumentProblem(f"invalid JSON Schema: {exc.message}") from None
    if registry is not None:
        return cls(schema, registry=registry)
    return cls(schema)


def _additional(error: Any) -> list[str]:
    """Properties that ``additionalProperties`` rejected in this error's instance."""
    import regex

    schema = error.schema if isinstance(error.schema, dict) else {}
    declared = schema.get("properties", {}) or {}
    patterns = list((schema.get("patternProperties", {}) or {}).keys())
    extras = []
    for name in error.instance:
        if name in declared:
            continue
        if any(regex.search(p, name) for p in patterns):
            continue
        extras.append(name)
    return extras


def compile_schema(schema: Any, registry: Any = None) -> Any:
    """The (cached) validator for ``schema``.

    Raises:
        ArgumentProblem: the schema is not JSON, invalid, or of an unknown draft.
    """
    # repr() is a cheap, exact cache key for JSON data (1, 1.0 and True differ); the validator
    # itself is built from a JSON round trip, so only JSON schemas ever reach jsonschema.
    key = repr(schema)
    found = _BY_REPR.get((key, id(registry)))
    if found is not None and found[0] is registry:
        return found[1]
    try:
        text = json.dumps(schema, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ArgumentProblem(f"the schema is not JSON: {exc}") from None
    validator = _validator(text, id(registry), registry)
    if len(_BY_REPR) >= 1024:
        _BY_REPR.clear()
    _BY_REPR[(key, id(registry))] = (registry, validator)
    return validator


def schema_issues(schema: Any, instance: Any, registry: Any = None) -> list[dict[str, Any]]:
    """Validate and return one issue per violation (empty when valid).

    Raises:
        ArgumentProblem: the schema is invalid, of an unknown draft, or has an unresolvable $ref.
    """
    validator = compile_schema(schema, registry)
    from jsonschema import exceptions
    from referencing.exceptions import Unresolvable

    issues: list[dict[str, Any]] = []
    try:
        errors = sorted(
            validator.iter_errors(instance), key=lambda e: (list(map(str, e.absolute_path)),)
        )
    except (Unresolvable, exceptions._WrappedReferencingError) as exc:  # type: ignore[attr-defined]
        raise ArgumentProblem(f"unresolvable $ref: {exc}") from None
    except RecursionError:
        raise ArgumentProblem("schema recursion too deep") from None
    seen_required: set[tuple[str, str]] = set()
    for error in errors:
        base = _pointer(error.absolute_path)
        keyword = str(error.validator)
        if keyword == "required" and isinstance(error.instance, dict):
            marker = (base, _pointer(error.absolute_schema_path))
            if marker in seen_required:
                continue
            seen_required.add(marker)
            for name in error.validator_value:
                if name not in error.instance:
                    issues.append(
                        {
                            "path": f"{base}/{escape_token(name)}",
                            "reason": "required",
                            "message": f"missing required property {name!r}",
                        }
                    )
        elif keyword == "additionalProperties" and isinstance(error.instance, dict):
            for name in _additional(error):
                issues.append(
                    {
                        "path": f"{base}/{escape_token(name)}",
                        "reason": "additionalProperties",
                        "message": f"property {name!r} is not allowed",
                    }
                )
        else:
            issues.append({"path": base, "reason": keyword, "message": error.message})
    return issues
