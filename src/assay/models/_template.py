"""Prompt templates: Jinja2 in its immutable sandbox, the language promptfoo users write (its
Nunjucks is Jinja-like).

A template sees the golden's ``vars`` by name (``{{ city }}``) and ``input``, ``id``, ``tier``,
``title`` and ``role`` (the last two when the golden has them); ``{{ input.question }}`` reads a
field and ``{{ input.0 }}`` a list item. Strings render as they are, every other value as compact
JSON. The expected answer, rubric and asserts are never in the context.

Fail closed: anything undefined is a :class:`ConfigError` naming the golden and the name (a typo
must never send a prompt with a hole to a paid model), and so is an attribute the sandbox refuses
(``{{ ''.__class__ }}``) or any other failure while rendering. A syntax error is found when the
candidates file is loaded (:func:`compile_template`), before any golden.

jinja2 is imported on first use: a run without candidates never loads it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import partial
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final

from assay._jinja import reads_other_files
from assay.errors import AssayError, ConfigError

if TYPE_CHECKING:
    from jinja2 import Environment, Template, nodes

# The golden's own names a template sees; a var may not shadow one of them.
RESERVED_NAMES: Final = ("input", "id", "tier", "title", "role")
# The context key under which prompt_context passes the golden's vars.
VARS_KEY: Final = "vars"
_SEEN: Final = (
    "a template sees input, id, tier, title and role (when the golden has them) and the "
    "golden's vars"
)
# A suite renders a handful of templates thousands of times: each text is compiled once. The
# bound only guards an API caller rendering endless distinct texts.
_MAX_COMPILED: Final = 4096
_compiled: dict[str, Template] = {}
_environment: Environment | None = None


class _Missing(Exception):
    """An undefined name or field, with what was missing (for the error's message): what the
    environment's undefined raises in place of Jinja's UndefinedError."""

    def __init__(self, message: str | None = None, *, name: Any, attribute: bool):
        super().__init__(message)
        self.name = name
        self.attribute = attribute


class _NotText(Exception):
    """A rendered value that is neither text nor JSON (a method, a generator)."""

    def __init__(self, value: Any):
        super().__init__(type(value).__name__)
        self.kind = type(value).__name__


def _finalize(value: Any) -> Any:
    """What ``{{ value }}`` prints: a string as it is, any other value as compact JSON (``true``,
    ``null``, ``["a","b"]``), never Python's repr."""
    from jinja2 import Undefined

    if isinstance(value, str):
        return value
    if isinstance(value, Undefined):
        return str(value)  # StrictUndefined: raises, naming what is missing
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):  # not JSON, or a circular structure
        raise _NotText(value) from None


def _env() -> Environment:
    global _environment
    if _environment is not None:
        return _environment
    from jinja2 import StrictUndefined
    from jinja2.exceptions import UndefinedError
    from jinja2.sandbox import ImmutableSandboxedEnvironment
    from jinja2.utils import missing

    class _Strict(StrictUndefined):
        """StrictUndefined whose error carries the missing name. The sandbox's refusals (its own
        exception class) are left as they are."""

        __slots__ = ()

        def __init__(
            self,
            hint: str | None = None,
            obj: Any = missing,
            name: str | None = None,
            exc: type[Exception] = UndefinedError,
        ):
            if exc is UndefinedError:
                exc = partial(_Missing, name=name, attribute=obj is not missing)  # type: ignore[assignment]
            super().__init__(hint, obj, name, exc)  # type: ignore[arg-type]

    class _Sandbox(ImmutableSandboxedEnvironment):
        """Golden data first: ``{{ input.items }}`` is the golden's ``items`` field (as in
        Nunjucks), not dict.items; ``{{ input.0 }}`` also reads a mapping's key ``"0"``. Data
        values are safe to return; everything else goes through the sandbox's checks."""

        def getattr(self, obj: Any, attribute: str) -> Any:
            if isinstance(obj, Mapping) and attribute in obj:
                return obj[attribute]
            return super().getattr(obj, attribute)

        def getitem(self, obj: Any, argument: Any) -> Any:
            if (
                isinstance(obj, Mapping)
                and isinstance(argument, int)
                and argument not in obj
                and str(argument) in obj
            ):
                return obj[str(argument)]
            return super().getitem(obj, argument)

    env = _Sandbox(
        autoescape=False, undefined=_Strict, keep_trailing_newline=True, finalize=_finalize
    )
    # Random text in a prompt would make every call a new cache entry and every run differ.
    env.globals.pop("lipsum", None)
    _environment = env
    return env


def compile_template(
    template: str, *, source: str | None, field: str, origin: str | None = None
) -> Template:
    """The compiled template (compiled once per text); errors name ``source`` (the candidates
    file), ``field`` (``candidates[0].prompt``) and ``origin`` (the ``file://`` path the text
    came from). ``include``, ``import`` and ``extends`` are refused like a syntax error: a
    template reads no other file."""
    compiled = _compiled.get(template)
    if compiled is not None:
        return compiled
    from jinja2 import TemplateSyntaxError

    env = _env()
    where = f" (in {origin})" if origin else ""
    try:
        tree = env.parse(template)
        tag = reads_other_files(tree)
        if tag is not None:
            raise ConfigError(
                f"'{tag}' is not available in a prompt template{where}: a template reads no "
                "other file (give the whole prompt as file://PATH)",
                source=source,
                field=field,
            )
        compiled = env.from_string(tree)
    except TemplateSyntaxError as exc:
        raise ConfigError(
            f"template syntax error{where} at line {exc.lineno}: {exc.message or exc}",
            source=source,
            field=field,
        ) from None
    if len(_compiled) >= _MAX_COMPILED:
        _compiled.clear()
    _compiled[template] = compiled
    return compiled


def template_names(context: Mapping[str, Any], *, where: str, field: str) -> dict[str, Any]:
    """The names a template sees: ``context`` with its ``vars`` mapping spread to the top level
    (a var named like one of the golden's own names is a ConfigError)."""
    names = {key: value for key, value in context.items() if key != VARS_KEY}
    found = context.get(VARS_KEY)
    if not isinstance(found, Mapping) or not found:
        return names
    clash = reserved_var(found)
    if clash is not None:
        raise ConfigError(reserved_var_message(context.get("id"), clash), source=where, field=field)
    return {**found, **names}


def reserved_var(found: Mapping[Any, Any]) -> str | None:
    """The first var named like one of the golden's own names, which it would hide."""
    return next((name for name in RESERVED_NAMES if name in found), None)


def reserved_var_message(golden: Any, name: str) -> str:
    return (
        f"golden {golden!r} has a var named {name!r}, a name the golden itself gives a "
        f"template ({', '.join(RESERVED_NAMES)}): rename the var"
    )


def _template_line(traceback: TracebackType | None) -> int | None:
    """The template line being rendered when it failed (Jinja maps its frames to lines)."""
    line = None
    while traceback is not None:
        if traceback.tb_frame.f_code.co_filename == "<template>":
            line = traceback.tb_lineno
        traceback = traceback.tb_next
    return line


def _segments(node: nodes.Node) -> list[Any] | None:
    """``input.tags.0`` as ``['input', 'tags', 0]``; None for an expression that is no path."""
    from jinja2 import nodes

    if isinstance(node, nodes.Name):
        return [node.name]
    if isinstance(node, nodes.Getattr):
        head = _segments(node.node)
        return None if head is None else [*head, node.attr]
    if isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const):
        head = _segments(node.node)
        return None if head is None else [*head, node.arg.value]
    return None


def _path_text(segments: list[Any]) -> str:
    text = str(segments[0])
    for part in segments[1:]:
        if isinstance(part, int) or (isinstance(part, str) and part.isidentifier()):
            text += f".{part}"
        else:
            text += f"[{part!r}]"
    return text


def _missing_path(template: str, name: Any, attribute: bool, line: int | None) -> str:
    """The path the template wrote for the missing ``name`` (``input.qestion``), found in its
    syntax tree; ``name`` itself when no written path ends there (a computed key)."""
    from jinja2 import nodes

    if not attribute:
        return str(name)
    paths: list[tuple[int, str]] = []
    for node in _env().parse(template).find_all((nodes.Getattr, nodes.Getitem)):
        segments = _segments(node)
        if segments is not None and segments[-1] == name:
            paths.append((node.lineno, _path_text(segments)))
    on_line = [text for lineno, text in paths if lineno == line]
    texts = on_line or [text for _, text in paths]
    return texts[0] if texts else str(name)


def render(template: str, context: Mapping[str, Any], *, where: str, field: str = "prompt") -> str:
    """Fill ``template`` from ``context`` (see :func:`template_names`); ``where`` names the
    candidates file and candidate, ``field`` the template (``prompt``, ``system``,
    ``messages[0].content``) in errors.

    Raises:
        ConfigError: a syntax error, an undefined name, an attribute the sandbox refuses, a value
            that is not text or JSON, or any other failure of the template.
    """
    from jinja2.exceptions import SecurityError

    compiled = compile_template(template, source=where, field=field)
    names = template_names(context, where=where, field=field)
    golden = context.get("id")
    try:
        return compiled.render(names)
    except AssayError:
        raise
    except Exception as exc:  # a template is code: any failure is the template's, said in a line
        line = _template_line(exc.__traceback__)
        if isinstance(exc, _Missing):
            path = _missing_path(template, exc.name, exc.attribute, line)
            at = f" (line {line})" if line is not None else ""
            raise ConfigError(
                f"the {field} template uses {path!r}{at}, which golden {golden!r} does not have; "
                f"{_SEEN}",
                source=where,
                field=field,
            ) from None
        if isinstance(exc, SecurityError):
            problem = f"the sandbox refuses it ({exc})"
        elif isinstance(exc, _NotText):
            problem = f"it prints a {exc.kind}, which is neither text nor JSON"
            if exc.kind == "generator":  # what map, select and friends return
                problem += " (add | list or | join)"
        else:
            problem = f"{type(exc).__name__}: {exc}"
    at = f" at line {line}" if line is not None else ""
    raise ConfigError(
        f"the {field} template fails for golden {golden!r}{at}: {problem}",
        source=where,
        field=field,
    ) from None
