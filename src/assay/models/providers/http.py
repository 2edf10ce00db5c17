"""The http provider: one's own app behind an HTTP endpoint, as promptfoo's ``http`` provider.

```yaml
provider:
  type: http
  url: "https://my-app.example.com/api/answer"
  method: POST                       # the default
  header_env: {Authorization: MY_APP_TOKEN}
  body: {question: "{{ prompt }}", user: "{{ user_id }}"}
  response_path: "data.answer"       # or transform_response: "parse.py:answer"
```

- ``body``: a mapping (sent as JSON) or a string (sent as it is), every string in it a
  template rendered in the sandbox of the prompt templates with ``prompt`` (the rendered
  prompt) and the names a prompt template sees (the golden's vars by name, ``input``, ``id``,
  ``tier``). A value that is not text renders as its JSON (``{{ tags }}`` gives
  ``["a","b"]``); in a string body, ``{{ prompt | tojson }}`` writes a JSON string.
- The answer: the value at ``response_path`` in the JSON body (``choices[0].message.content``,
  ``output``, ``items.0.text``), or what ``transform_response`` (``file.py:function``, the file
  relative to the project root) returns when called with (the JSON body or None, the body
  text), or the whole body text when neither is set. An answer that is not text is kept as its
  compact JSON text. A transform may also return promptfoo's ``{output, tokenUsage}``.
- Retries, timeouts and statuses are the other HTTP providers': 429 and 5xx retried (honouring
  Retry-After), other 4xx final, each error keeping the server's own message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

from assay.models.providers._base import Completion, ProviderConfig, ProviderError
from assay.models.providers.openai import HTTPProvider

METHODS: Final = ("GET", "POST", "PUT", "PATCH", "DELETE")
# One step of a response path: a name (any characters but . and [) or an [index].
_STEP: Final = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


class PathError(ValueError):
    """A ``response_path`` that is not a path; ``setting`` names the field for the runner."""

    setting: Final = "response_path"


def parse_path(path: str) -> tuple[str | int, ...]:
    """``choices[0].message.content`` as ``("choices", 0, "message", "content")``: names joined
    by dots, ``[n]`` an index (a name made of digits also indexes a list)."""
    steps: list[str | int] = []
    position = 0
    text = path.strip()
    while position < len(text):
        if steps and text[position] == ".":
            position += 1
        found = _STEP.match(text, position)
        if found is None or (found.group(1) is not None and not found.group(1).strip()):
            raise PathError(
                f"response_path {path!r} is not a path like 'choices[0].message.content'"
            )
        name, index = found.groups()
        steps.append(int(index) if index is not None else name)
        position = found.end()
    if not steps:
        raise PathError("response_path is empty")
    return tuple(steps)


def follow(data: Any, steps: tuple[str | int, ...], path: str) -> Any:
    """The value at ``steps`` in ``data``; a step that finds nothing is a ProviderError naming
    the part of the path that was found."""
    value = data
    for depth, step in enumerate(steps):
        if isinstance(value, list) and (isinstance(step, int) or step.isdigit()):
            index = int(step)
            if index < len(value):
                value = value[index]
                continue
        elif isinstance(value, Mapping) and str(step) in value:
            value = value[str(step)]
            continue
        where = "the answer" if depth == 0 else f"the answer's {_shown(steps[:depth])}"
        kind = "JSON body" if data is not None else "body, which is not JSON"
        raise ProviderError(
            f"response_path {path!r}: {where} has no {_shown((step,))} ({kind})",
            retryable=False,
        )
    return value


def _shown(steps: tuple[str | int, ...]) -> str:
    return "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in steps).lstrip(".")


class HTTPEndpointProvider(HTTPProvider):
    def __init__(self, config: ProviderConfig, root: Path | None = None):
        self.root = Path.cwd() if root is None else root
        self.method = (config.method or "POST").upper()
        self.body = json.loads(config.body) if config.body is not None else None
        self.steps = parse_path(config.response_path) if config.response_path else None
        self.transform: Callable[..., Any] | None = None
        if config.transform_response:
            from assay.models.providers.python import FILE_PREFIX, FunctionError, load_function

            try:
                spec = FILE_PREFIX + config.transform_response.removeprefix(FILE_PREFIX)
                self.transform = load_function(spec, self.root, default="")
            except FunctionError as exc:
                raise TransformError(str(exc)) from None
        super().__init__(config, {})

    def _request_body(self, prompt: str, context: Mapping[str, Any]) -> dict[str, Any]:
        """httpx's arguments for the body: the rendered template, JSON for a mapping, the text
        itself for a string; nothing without a body."""
        if self.body is None:
            return {}
        names = {**context, "prompt": prompt}
        rendered = _render(self.body, names)
        if isinstance(rendered, str):
            return {"content": rendered.encode("utf-8")}
        return {"json": rendered}

    async def complete(self, prompt: str) -> Completion:
        return await self.complete_with_context(prompt, {})

    async def complete_with_context(self, prompt: str, context: Mapping[str, Any]) -> Completion:
        """One request, its body rendered for this golden; the answer read as the config says."""
        url = self.config.url or ""
        response = await self.send(self.method, url, **self._request_body(prompt, context))
        text = response.text
        try:
            data = json.loads(response.content)
        except (ValueError, UnicodeDecodeError, RecursionError):
            data = None
        if self.transform is not None:
            return await self._transformed(data, text)
        if self.steps is not None:
            from assay.models.providers.python import output_text

            return Completion(
                output_text(follow(data, self.steps, self.config.response_path or ""))
            )
        return Completion(text)

    async def _transformed(self, data: Any, text: str) -> Completion:
        from assay.models.providers.python import (
            call_guarded,
            output_text,
            promptfoo_completion_of,
        )

        what = f"transform_response {self.config.transform_response!r}"
        assert self.transform is not None
        value = await call_guarded(self.transform, (data, text), self.config.timeout_s, what)
        if isinstance(value, Mapping) and ("output" in value or "error" in value):
            return promptfoo_completion_of(value, what)
        return Completion(output_text(value))


def transform_digest(config: ProviderConfig, root: Path | None = None) -> str | None:
    """The sha256 of ``transform_response``'s file (None without one), for the cache identity:
    an edited transform is a cache miss. A file that cannot be found names the setting."""
    if not config.transform_response:
        return None
    from assay.models.providers.python import FILE_PREFIX, FunctionError, source_digest

    spec = FILE_PREFIX + config.transform_response.removeprefix(FILE_PREFIX)
    try:
        return source_digest(spec, root)
    except FunctionError as exc:
        raise TransformError(str(exc)) from None


class TransformError(ValueError):
    """``transform_response`` names no function: the provider cannot start."""

    setting: Final = "transform_response"


def _render(value: Any, names: Mapping[str, Any]) -> Any:
    """``value`` with every string in it rendered as a template (keys are kept as written)."""
    from assay.errors import ConfigError
    from assay.models._template import render

    if isinstance(value, str):
        try:
            return render(value, names, where="", field="provider.body")
        except ConfigError as exc:  # the run names the candidates file the provider is in
            raise ConfigError(exc.message, field=exc.field) from None
    if isinstance(value, list):
        return [_render(item, names) for item in value]
    if isinstance(value, dict):
        return {key: _render(item, names) for key, item in value.items()}
    return value
