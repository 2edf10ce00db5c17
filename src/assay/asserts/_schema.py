"""JSON Schema validation with the ``jsonschema`` library (full, not a subset).

Draft 2020-12 unless ``$schema`` names another known draft, or a metaschema found in the
reference registry (its ``$vocabulary`` is honoured: keywords of vocabularies it leaves out are
not applied; an unknown *required* vocabulary fails closed). An unknown ``$schema`` or an
invalid schema is a bad argument.

``pattern`` and ``patternProperties`` run on the ``regex`` engine with a time budget, so a
pathological schema pattern cannot hang a run, and Unicode property escapes (``\\p{Letter}``)
work as in ECMA-262.

Each violation becomes one issue ``{path, reason, message}`` where ``reason`` is the failing
keyword and ``path`` the JSON Pointer of the failing value; for ``required`` and
``additionalProperties`` the path names the missing or extra property, one issue per property,
as the TypeScript helper does.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from typing import Any, Final

from assay.asserts._pointer import escape_token
from assay.asserts._result import ArgumentProblem

PATTERN_TIMEOUT_S: Final = 0.1
_UNKNOWN = object()
_CORE: Final = frozenset({"$ref", "$dynamicRef"})
# The draft 2020-12 vocabularies; each one's keywords are listed by its metaschema (see _keywords).
_VOCABULARIES: Final = frozenset(
    f"https://json-schema.org/draft/2020-12/vocab/{name}"
    for name in """core applicator unevaluated validation format-annotation format-assertion
    content meta-data""".split()
)

# (canonical schema text, id(registry)) -> (registry, validator); the registry is kept so its
# id cannot be reused by another object while the entry lives.
_VALIDATORS: dict[tuple[str, int], tuple[Any, Any]] = {}
_BY_REPR: dict[tuple[str, int], tuple[Any, Any]] = {}
_CACHE_LIMIT: Final = 1024


class PatternTimeout(Exception):
    """A schema pattern exceeded its time budget."""


def _search(pattern: str, text: str) -> bool:
    import regex

    try:
        return regex.search(pattern, text, timeout=PATTERN_TIMEOUT_S) is not None
    except TimeoutError:
        raise PatternTimeout(pattern) from None


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and not _search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _format_checker() -> Any:
    """The default format checker, with 'regex' judged by the regex engine (\\p{..} is valid)."""
    from jsonschema import FormatChecker

    checker = FormatChecker()

    @checker.checks("regex", raises=Exception)
    def _is_regex(instance: object) -> bool:
        import regex

        if isinstance(instance, str):
            regex.compile(instance)
        return True

    return checker


def _with_our_patterns(cls: Any, keep: frozenset[str] | None = None) -> Any:
    from jsonschema import validators

    ours = {"pattern": _pattern, "patternProperties": _pattern_properties}
    table = {k: ours.get(k, v) for k, v in cls.VALIDATORS.items()}
    if keep is not None:
        table = {k: v for k, v in table.items() if k in keep or k in _CORE}
    return validators.create(
        meta_schema=cls.META_SCHEMA,
        validators=table,
        type_checker=cls.TYPE_CHECKER,
        format_checker=cls.FORMAT_CHECKER,
        id_of=cls.ID_OF,
        applicable_validators=cls._APPLICABLE_VALIDATORS,
    )


def _keywords(vocabulary: str) -> frozenset[str]:
    """A vocabulary's keywords: the properties of its metaschema (``meta/`` for ``vocab/``)."""
    from jsonschema_specifications import REGISTRY

    return frozenset(REGISTRY.contents(vocabulary.replace("/vocab/", "/meta/"))["properties"])


def _custom_metaschema(uri: str, registry: Any) -> tuple[Any, frozenset[str] | None]:
    """The base draft and the kept keywords for a metaschema found in the registry."""
    from jsonschema.validators import validator_for

    try:
        meta = registry.contents(uri.rstrip("#"))
    except Exception:
        raise ArgumentProblem(f"unknown $schema {uri!r}") from None
    if not isinstance(meta, dict):
        raise ArgumentProblem(f"the metaschema {uri!r} is not an object")
    if not isinstance(meta.get("$schema"), str):  # validator_for would raise on a non-string
        raise ArgumentProblem(f"the metaschema {uri!r} is of an unknown draft")
    base = validator_for(meta, default=_UNKNOWN)  # type: ignore[arg-type]
    if base is _UNKNOWN:
        raise ArgumentProblem(f"the metaschema {uri!r} is of an unknown draft")
    vocabulary = meta.get("$vocabulary")
    if not isinstance(vocabulary, dict):
        return base, None
    keep: set[str] = set()
    for vocab, required in vocabulary.items():
        if vocab in _VOCABULARIES:
            keep |= _keywords(vocab)
        elif required:
            raise ArgumentProblem(f"the metaschema requires an unknown vocabulary {vocab!r}")
    return base, frozenset(keep)


class RemoteRefRefused(Exception):
    """A ``$ref`` to a document that is neither in the schema nor a known metaschema."""


def _refuse(uri: str) -> Any:
    raise RemoteRefRefused(uri)


@cache
def offline_registry() -> Any:
    """The metaschemas, and nothing that is fetched. jsonschema's default registry retrieves an
    unknown ``$ref`` over HTTP (with no timeout): a golden could make CI call any URL, or hang
    it. Here such a ``$ref`` is a failed check naming the URI, and no socket is ever opened."""
    import referencing
    from jsonschema_specifications import REGISTRY

    return REGISTRY.combine(referencing.Registry(retrieve=_refuse))  # type: ignore[call-arg]


def _build(schema_text: str, registry: Any) -> Any:
    from jsonschema import Draft202012Validator, exceptions
    from jsonschema.validators import validator_for

    schema = json.loads(schema_text)
    keep = None
    if isinstance(schema, dict):
        uri = schema.get("$schema")
        if uri is not None and not isinstance(uri, str):  # validator_for would raise on it
            raise ArgumentProblem("$schema must be a string, the URI of a metaschema")
        cls = validator_for(schema, default=_UNKNOWN)  # type: ignore[arg-type]
        if cls is _UNKNOWN:
            if uri is None:
                cls = Draft202012Validator
            elif registry is not None:
                cls, keep = _custom_metaschema(uri, registry)
            else:
                raise ArgumentProblem(f"unknown $schema {uri!r}")
    elif isinstance(schema, bool):
        cls = Draft202012Validator
    else:
        raise ArgumentProblem("a JSON Schema must be an object or a boolean")
    try:
        cls.check_schema(schema, format_checker=_format_checker())  # type: ignore[call-arg]
    except exceptions.SchemaError as exc:
        raise ArgumentProblem(f"invalid JSON Schema: {exc.message}") from None
    ours = _with_our_patterns(cls, keep)
    return ours(schema, registry=registry if registry is not None else offline_registry())


def compile_schema(schema: Any, registry: Any = None) -> Any:
    """The (cached) validator for ``schema``; an ArgumentProblem when the schema is not JSON,
    invalid, or of an unknown draft."""
    # repr() is a cheap, exact cache key for JSON data (1, 1.0 and True differ); the validator
    # itself is built from a JSON round trip, so only JSON schemas ever reach jsonschema.
    fast_key = (repr(schema), id(registry))
    found = _BY_REPR.get(fast_key)
    if found is not None and found[0] is registry:
        return found[1]
    try:
        text = json.dumps(schema, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise ArgumentProblem(f"the schema is not JSON: {exc}") from None
    key = (text, id(registry))
    entry = _VALIDATORS.get(key)
    if entry is None or entry[0] is not registry:
        if len(_VALIDATORS) >= _CACHE_LIMIT:
            _VALIDATORS.clear()
        entry = (registry, _build(text, registry))
        _VALIDATORS[key] = entry
    if len(_BY_REPR) >= _CACHE_LIMIT:
        _BY_REPR.clear()
    _BY_REPR[fast_key] = entry
    return entry[1]


def _additional(error: Any) -> list[str]:
    """Properties that ``additionalProperties`` rejected in this error's instance."""
    schema = error.schema if isinstance(error.schema, dict) else {}
    declared = schema.get("properties", {}) or {}
    patterns = list((schema.get("patternProperties", {}) or {}).keys())
    return [
        name
        for name in error.instance
        if name not in declared and not any(_search(p, name) for p in patterns)
    ]


def validator_issues(validator: Any, instance: Any) -> list[dict[str, Any]]:
    """The issues of ``instance`` under an already compiled validator."""
    from jsonschema import exceptions
    from referencing.exceptions import Unresolvable

    try:
        errors = validator.iter_errors(instance)
        return _issues(sorted(errors, key=lambda e: [str(p) for p in e.absolute_path]))
    except (Unresolvable, exceptions._WrappedReferencingError) as exc:  # type: ignore[attr-defined]
        refused = _refused_uri(exc)
        if refused is not None:
            raise ArgumentProblem(
                f"$ref {refused!r} is not in the schema: assay never fetches a schema over "
                "the network",
                {"reason": "remote_ref_refused", "uri": refused},
            ) from None
        raise ArgumentProblem(f"unresolvable $ref: {exc}") from None
    except PatternTimeout as exc:
        raise ArgumentProblem(
            f"schema pattern {exc} exceeded its {PATTERN_TIMEOUT_S:g} s time budget",
            {"reason": "regex_timeout"},
        ) from None
    except RecursionError:
        raise ArgumentProblem("schema recursion too deep") from None
    except TypeError:
        # Only a value built in Python gets here (a mapping with an int key met by a
        # patternProperties regex): it is not JSON, so it cannot be judged; fail closed.
        raise ArgumentProblem(
            "the output is not a JSON value (a mapping key that is not a string?)",
            {"reason": "not_json"},
        ) from None


def _refused_uri(exc: BaseException) -> str | None:
    """The URI our registry refused to fetch, if that is what made ``exc``."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, RemoteRefRefused):
            return str(seen.args[0])
        seen = seen.__cause__ or seen.__context__
    return None


def _issues(errors: list[Any]) -> list[dict[str, Any]]:
    issues: list[dict[str, Any]] = []
    seen_required: set[tuple[str, str]] = set()
    for error in errors:
        base = "".join("/" + escape_token(str(p)) for p in error.absolute_path)
        keyword = "false" if error.validator is None else str(error.validator)
        if keyword == "required" and isinstance(error.instance, dict):
            marker = (base, "/".join(map(str, error.absolute_schema_path)))
            if marker in seen_required:
                continue
            seen_required.add(marker)
            names = [name for name in error.validator_value if name not in error.instance]
            message = "missing required property {!r}"
        elif keyword == "additionalProperties" and isinstance(error.instance, dict):
            names = _additional(error)
            message = "property {!r} is not allowed"
        else:
            issues.append({"path": base, "reason": keyword, "message": error.message})
            continue
        # One issue per missing or extra property, at that property's path.
        issues.extend(
            {"path": f"{base}/{escape_token(n)}", "reason": keyword, "message": message.format(n)}
            for n in names
        )
    return issues
