"""Tool-call ops for OpenAI-style function calling: is-valid-tool-call, tool-call.

An output holds tool calls when it is (as JSON text or a parsed value) one call
``{"type": "function", "function": {"name", "arguments"}}``, a list of calls, a message or
response with ``tool_calls``, or a chat completion ``{"choices": [{"message": {...}}]}``. A
call's ``arguments`` is a JSON string (as the API sends it) or an already parsed object.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from assay.asserts._context import CheckContext, OutputView, json_equal, strict_json_loads
from assay.asserts._result import ArgumentProblem, Outcome, clip
from assay.asserts._schema import compile_schema, validator_issues


def _kind(value: Any) -> str:
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    return "value"


def _call_problem(call: Any) -> tuple[str | None, Any, str | None]:
    """``(name, arguments, problem)`` of one call; ``problem`` says what is wrong with it."""
    if not isinstance(call, Mapping):
        return None, None, f"a call is a JSON {_kind(call)}, not an object"
    function = call.get("function")
    if not isinstance(function, Mapping):
        return None, None, "a call has no 'function' object"
    name = function.get("name")
    if not isinstance(name, str) or not name.strip():
        return None, None, "a call's function has no name"
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = strict_json_loads(arguments)
        except (ValueError, RecursionError):
            return name, None, f"the arguments of '{name}' are not JSON"
    if not isinstance(arguments, Mapping):
        return name, None, f"the arguments of '{name}' are a JSON {_kind(arguments)}, not an object"
    return name, arguments, None


def _parsed_calls(view: OutputView) -> list[Any] | str:
    """The tool calls the output holds, unchecked (a call may still be malformed), or why it
    holds none."""
    ok, value = view.as_json()
    if not ok:
        return "the output is not JSON, so it holds no tool call"
    if isinstance(value, Mapping) and "choices" in value:
        choices = value["choices"]
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
            return "the response has no choices"
        value = choices[0].get("message")
        if not isinstance(value, Mapping):
            return "the response's first choice has no message"
    if isinstance(value, Mapping) and "tool_calls" in value:
        calls = value["tool_calls"]
        if calls is not None and not isinstance(calls, list):
            return "tool_calls is not a list"
    elif isinstance(value, Mapping) and ("function" in value or value.get("type") == "function"):
        calls = [value]
    elif isinstance(value, list):
        calls = value
    else:
        return f"the output is a JSON {_kind(value)} holding no tool_calls"
    return calls or "the output holds no tool call"


def _tool_schemas(tools: Any, ctx: CheckContext) -> dict[str, Any]:
    """Tool name -> the compiled validator of its ``parameters`` (None: any object); an
    ArgumentProblem when ``tools`` is not a list of OpenAI tool definitions."""
    if not isinstance(tools, list):
        raise ArgumentProblem("argument 'tools' must be a list of tool definitions")
    found: dict[str, Any] = {}
    for index, tool in enumerate(tools):
        # {"type": "function", "function": {...}}, or the bare function definition.
        definition = tool.get("function", tool) if isinstance(tool, Mapping) else None
        name = definition.get("name") if isinstance(definition, Mapping) else None
        if not isinstance(name, str) or not name or not isinstance(definition, Mapping):
            raise ArgumentProblem(f"tools[{index}] is not a tool definition with a name")
        parameters = definition.get("parameters")
        found[name] = (
            None if parameters is None else compile_schema(parameters, ctx.schema_registry)
        )
    return found


def _schema_problem(validator: Any, arguments: Any, name: str) -> tuple[str, dict[str, Any]] | None:
    """Why the arguments of ``name`` fail its schema, and the evidence, or None."""
    issues = validator_issues(validator, arguments)
    if not issues:
        return None
    first = issues[0]
    path = first["path"] or "/"
    return (
        f"the arguments of '{name}' violate its schema at '{path}' ({first['message']})",
        {"reason": "schema_validation_failed", "issues": issues},
    )


def op_is_valid_tool_call(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    schemas = _tool_schemas(args["tools"], ctx) if args.get("tools") is not None else None
    calls = _parsed_calls(view)
    if isinstance(calls, str):
        return False, calls, {"reason": "no_tool_call"}
    for call in calls:
        name, arguments, problem = _call_problem(call)
        if problem is not None:
            return False, problem, {"reason": "invalid_tool_call"}
        assert name is not None  # a call without a problem has a name
        if schemas is None:
            continue
        if name not in schemas:
            known = ", ".join(sorted(schemas)) or "none"
            reason = f"'{name}' is not a defined tool (defined: {known})"
            return False, reason, {"reason": "unknown_tool", "name": name}
        found = None if schemas[name] is None else _schema_problem(schemas[name], arguments, name)
        if found is not None:
            return False, found[0], found[1]
    return True, None, None


def _shown(value: Any) -> str:
    try:
        return clip(json.dumps(value, ensure_ascii=False, allow_nan=False))
    except (TypeError, ValueError, RecursionError):
        return clip(repr(value))


def op_tool_call(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    wanted = args.get("name", args.get("value"))
    if not isinstance(wanted, str) or not wanted:
        raise ArgumentProblem("argument 'name' must be the tool's name")
    expected = args.get("arguments")
    if expected is not None and not isinstance(expected, Mapping):
        raise ArgumentProblem("argument 'arguments' must be a mapping of argument -> value")
    schema = args.get("schema")
    validator = compile_schema(schema, ctx.schema_registry) if schema is not None else None
    calls = _parsed_calls(view)
    if isinstance(calls, str):
        return False, calls, {"reason": "no_tool_call"}
    names: list[str] = []
    first_problem: tuple[str, dict[str, Any]] | None = None
    for call in calls:
        name, arguments, problem = _call_problem(call)
        if name is not None:
            names.append(name)
        if name != wanted:
            continue
        if problem is not None:
            first_problem = first_problem or (problem, {"reason": "invalid_tool_call"})
            continue
        mismatch = _argument_mismatch(expected, arguments) if expected else None
        if mismatch is None and validator is not None:
            mismatch = _schema_problem(validator, arguments, wanted)
        if mismatch is None:
            return True, None, None
        first_problem = first_problem or mismatch
    if first_problem is not None:
        return False, first_problem[0], first_problem[1]
    called = ", ".join(f"'{n}'" for n in names) or "no named tool"
    reason = f"no call to '{wanted}' (the output calls {called})"
    return False, reason, {"reason": "wrong_tool", "name": wanted, "called": names}


def _argument_mismatch(
    expected: Mapping[str, Any], arguments: Mapping[str, Any]
) -> tuple[str, dict[str, Any]] | None:
    for key, value in expected.items():
        if key not in arguments:
            return f"argument '{key}' is missing", {"reason": "argument_missing", "argument": key}
        if not json_equal(arguments[key], value):
            return (
                f"argument '{key}' is {_shown(arguments[key])}, expected {_shown(value)}",
                {"reason": "argument_differs", "argument": key},
            )
    return None
