"""Rendering a golden's templated assert values (``contains: '{{ city }}'``) with its vars.

The rules are a prompt template's (:mod:`assay.models._template`, which this layer may not
import: loading goldens never loads the model code): Jinja2 in its immutable sandbox, names
undefined are errors (never an empty string), the golden's data before Python's attributes
(``{{ input.items }}`` is its ``items`` field), strings printed as they are and any other value
as compact JSON, no ``include`` / ``import`` / ``extends``, no ``lipsum``.

jinja2 is imported on first use: a suite with no template never loads it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from assay.errors import GoldenError

_SEEN: Final = (
    "a template sees input, id, tier, title and role (when the golden has them) and the "
    "golden's vars"
)
_MAX_COMPILED: Final = 4096
_compiled: dict[str, Any] = {}
_environment: Any = None


def _finalize(value: Any) -> Any:
    """What ``{{ value }}`` prints: a string as it is, any other value as compact JSON."""
    from jinja2 import Undefined

    if isinstance(value, str):
        return value
    if isinstance(value, Undefined):
        return str(value)  # StrictUndefined: raises, naming what is missing
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        kind = type(value).__name__
        raise TypeError(f"it prints a {kind}, which is neither text nor JSON") from None


def _env() -> Any:
    global _environment
    if _environment is None:
        from jinja2 import StrictUndefined
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        class _Sandbox(ImmutableSandboxedEnvironment):
            """Golden data first, as a prompt template reads it."""

            def getattr(self, obj: Any, attribute: str) -> Any:
                if isinstance(obj, Mapping) and attribute in obj:
                    return obj[attribute]
                return super().getattr(obj, attribute)

        env = _Sandbox(
            autoescape=False,
            undefined=StrictUndefined,
            keep_trailing_newline=True,
            finalize=_finalize,
        )
        env.globals.pop("lipsum", None)  # random text would make every load differ
        _environment = env
    return _environment


def _compile(template: str) -> Any:
    compiled = _compiled.get(template)
    if compiled is None:
        from assay._jinja import reads_other_files

        env = _env()
        tree = env.parse(template)
        word = reads_other_files(tree)
        if word is not None:
            raise ValueError(f"'{word}' is not available in an assert's template")
        compiled = env.from_string(tree)
        if len(_compiled) >= _MAX_COMPILED:
            _compiled.clear()
        _compiled[template] = compiled
    return compiled


def render_value(
    template: str, names: Mapping[str, Any], *, source: str, field: str, name: str
) -> str:
    """``template`` rendered with ``names`` (the golden's vars and own names). Anything that
    goes wrong is a GoldenError naming ``source`` and ``field``; ``name`` is the argument
    (``value``) the message speaks of."""
    from jinja2 import TemplateSyntaxError, UndefinedError
    from jinja2.exceptions import SecurityError

    golden = names.get("id")
    try:
        return str(_compile(template).render(dict(names)))
    except TemplateSyntaxError as exc:
        problem = f"the {name} template has a syntax error at line {exc.lineno}: {exc.message}"
    except UndefinedError as exc:
        problem = (
            f"the {name} template uses a name golden {golden!r} does not have "
            f"({exc.message}); {_SEEN}"
        )
    except SecurityError as exc:
        problem = f"the {name} template fails: the sandbox refuses it ({exc})"
    except Exception as exc:  # a template is code: any failure is the template's, in a line
        problem = f"the {name} template fails for golden {golden!r}: {exc}"
    raise GoldenError(problem, source=source, field=field)


def template_names(context: Mapping[str, Any]) -> dict[str, Any]:
    """The names a template sees: the golden's vars at the top level, its own names over them
    (a var of one of those names is refused when the golden is loaded)."""
    found = context.get("vars")
    names = {key: value for key, value in context.items() if key != "vars"}
    return {**found, **names} if isinstance(found, Mapping) else names
