"""promptfoo provider ids and their ``config`` as assay provider mappings.

The id grammar is promptfoo's ``providerMap`` (src/providers/registry.ts): ``openai:chat:M`` /
``openai:M``; ``anthropic:messages:M`` / ``anthropic:M``; ``azure:chat:DEPLOYMENT`` (or
``azureopenai:``); ``bedrock:converse:M`` / ``bedrock:M``; ``vertex:chat:M`` / ``vertex:M``;
``google:M``; ``sagemaker:ENDPOINT`` / ``sagemaker:TYPE:ENDPOINT``;
``huggingface:text-generation:M`` (or ``hf:``); ``ollama:chat:M`` / ``ollama:M``; the
OpenAI-compatible ``openrouter: perplexity: groq: mistral: cerebras: togetherai: fireworks:
deepseek:`` followed by the model (which may hold ``:`` and ``/``); ``replicate:OWNER/M[:V]``;
``http`` / ``https://URL``; ``file://provider.py[:fn]`` / ``python:provider.py``;
``exec:COMMAND``; ``echo``. A config key that means the same in assay becomes that setting;
every other key is listed, never dropped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Final, Protocol

from assay.models import SAMPLING_SETTINGS, settings_refused_by


class Context(Protocol):
    """What converting a provider needs from the converter."""

    def skip_config(self, what: str, why: str) -> None:
        """List one construct that is not converted (config level)."""

    def script(self, ref: str, where: str) -> str:
        """The reference to write for the script file ``ref`` names (copied with the project)."""


# promptfoo's OpenAI-compatible presets, by their prefix, as assay's provider types.
_COMPATIBLE: Final = {
    "openrouter": "openrouter",
    "perplexity": "perplexity",
    "groq": "groq",
    "cerebras": "cerebras",
    "togetherai": "together",
    "fireworks": "fireworks",
    "deepseek": "deepseek",
    "vllm": "vllm",
    "mistral": "mistral",
}
# promptfoo's sampling keys (OpenAI's names) that assay's settings share.
_SAMPLING: Final = ("temperature", "max_tokens", *SAMPLING_SETTINGS)
# Google's generationConfig / Bedrock's inferenceConfig names for the same settings.
_CAMEL: Final = {
    "temperature": "temperature",
    "maxOutputTokens": "max_tokens",
    "maxTokens": "max_tokens",
    "max_new_tokens": "max_tokens",
    "num_predict": "max_tokens",
    "topP": "top_p",
    "stopSequences": "stop",
}
_NOT_SETTING: Final = "not an assay provider setting"
_KEY_WHY: Final = "a key written in the config is not converted: set api_key_env instead"
_SCRIPT_SUFFIXES: Final = (".py", ".js", ".cjs", ".mjs", ".ts")


def convert(
    name: str, config: Mapping[str, Any], where: str, ctx: Context
) -> dict[str, Any] | None:
    """The assay provider for promptfoo's provider ``name`` with ``config``, None (listed)
    when assay has no provider for it."""
    kind, _, rest = name.partition(":")
    unsupported = f"{where} ({name})"
    builder = _BUILDERS.get(kind)
    if name == "echo":
        for key in sorted(config, key=str):
            ctx.skip_config(f"{where}.config.{key}", "the echo provider takes no settings")
        return {"type": "echo"}
    if name in ("http", "https") or re.match(r"https?://", name):
        return _http(name, config, where, ctx)
    if name.startswith("file://") or kind == "python":
        return _python(name, config, where, ctx)
    if kind == "exec" and rest.strip():
        return _exec(rest.strip(), config, where, ctx)
    if kind in _COMPATIBLE:
        model = _compatible_model(kind, rest)
        if model is None:
            ctx.skip_config(unsupported, "this kind of model (not chat) is not converted")
            return None
        return _settings({"type": _COMPATIBLE[kind], "model": model}, config, where, ctx)
    if builder is None:
        ctx.skip_config(unsupported, "assay has no client for this provider")
        return None
    provider = builder(rest)
    if provider is None:
        ctx.skip_config(unsupported, "this kind of model (not chat) is not converted")
        return None
    provider = _settings(provider, config, where, ctx)
    if provider["type"] == "azure" and "base_url" not in provider:
        # promptfoo reads the resource from AZURE_API_HOST when the config has no apiHost.
        why = "no apiHost in its config (promptfoo reads AZURE_API_HOST): set base_url to convert"
        ctx.skip_config(unsupported, why)
        return None
    return provider


def _compatible_model(kind: str, rest: str) -> str | None:
    parts = rest.split(":")
    if kind == "mistral":
        if parts[0] in ("embedding", "embeddings"):
            return None
        return ":".join(parts[1:]) or parts[0] or None
    if kind == "groq" and parts[0] == "responses":
        return None
    return rest or None


def _openai(rest: str) -> dict[str, Any] | None:
    model_type, _, model = rest.partition(":")
    if model_type == "chat":
        return {"type": "openai", "model": model or "gpt-4.1-2025-04-14"}
    if ":" in rest or model_type in _OPENAI_NOT_CHAT:
        return None
    # promptfoo treats any other openai:NAME as a chat model.
    return {"type": "openai", "model": model_type} if model_type else None


_OPENAI_NOT_CHAT: Final = frozenset(
    "embedding embeddings completion moderation realtime responses transcription agents"
    " chatkit assistant image video codex codex-sdk codex-app-server codex-desktop".split()
)


def _anthropic(rest: str) -> dict[str, Any] | None:
    parts = rest.split(":")
    if parts[0] == "messages" and len(parts) > 1 and parts[1]:
        return {"type": "anthropic", "model": parts[1]}
    if parts[0] in ("completion", "claude-agent-sdk", "claude-code") or len(parts) > 1:
        return None
    return {"type": "anthropic", "model": parts[0]} if parts[0] else None


def _azure(rest: str) -> dict[str, Any] | None:
    model_type, _, deployment = rest.partition(":")
    if model_type != "chat" or not deployment:
        return None
    return {"type": "azure", "deployment": deployment}


def _bedrock(rest: str) -> dict[str, Any] | None:
    model_type, _, model = rest.partition(":")
    if model_type == "converse":
        return {"type": "bedrock", "model": model} if model else None
    if model_type in ("agents", "kb", "knowledge-base", "embedding", "embeddings", "video"):
        return None
    if model_type in ("nova-sonic", "completion") or "nova-sonic" in model_type:
        return None
    # promptfoo's bedrock:MODEL calls InvokeModel; assay's bedrock speaks Converse to the
    # same model (the model id is the whole rest, its ":0" version included).
    return {"type": "bedrock", "model": rest} if rest else None


def _vertex(rest: str) -> dict[str, Any] | None:
    first, _, model = rest.partition(":")
    if first == "chat":
        return {"type": "vertex", "model": model} if model else None
    if first in ("video", "embedding", "embeddings"):
        return None
    return {"type": "vertex", "model": rest} if rest else None


def _google(rest: str) -> dict[str, Any] | None:
    parts = rest.split(":")
    if len(parts) >= 2 or not parts[0] or "-image" in parts[0]:
        return None  # google:live:, google:image:, google:video:, google:embedding:
    return {"type": "gemini", "model": parts[0]}


# promptfoo's sagemaker modelType values whose request shape assay's ``payload`` speaks.
_SAGEMAKER_PAYLOADS: Final = ("openai", "huggingface")


def _sagemaker(rest: str) -> dict[str, Any] | None:
    parts = rest.split(":")
    if parts[0] in ("embedding", "embeddings") or not parts[0]:
        return None
    if len(parts) == 1:
        return {"type": "sagemaker", "endpoint": parts[0]}
    endpoint = ":".join(parts[1:])
    if parts[0] in _SAGEMAKER_PAYLOADS and endpoint:
        return {"type": "sagemaker", "endpoint": endpoint, "payload": parts[0]}
    return None  # llama, jumpstart, custom: request shapes assay's sagemaker does not send


# promptfoo's huggingface:chat speaks OpenAI's chat completions at Hugging Face's router.
_HF_CHAT: Final = {"base_url": "https://router.huggingface.co/v1", "api_key_env": "HF_TOKEN"}


def _huggingface(rest: str) -> dict[str, Any] | None:
    task, _, model = rest.partition(":")
    if task == "text-generation" and model:
        return {"type": "huggingface", "model": model}
    if task == "chat" and model:
        return {"type": "openai", "model": model, **_HF_CHAT}
    return None


def _ollama(rest: str) -> dict[str, Any] | None:
    first, _, model = rest.partition(":")
    if first in ("embedding", "embeddings"):
        return None
    if first in ("chat", "completion"):
        return {"type": "ollama", "model": model} if model else None
    return {"type": "ollama", "model": rest} if rest else None


def _replicate(rest: str) -> dict[str, Any] | None:
    first = rest.split(":")[0]
    if first in ("moderation", "image") or not rest:
        return None
    return {"type": "replicate", "model": rest}


_BUILDERS: Final[dict[str, Callable[[str], dict[str, Any] | None]]] = {
    "openai": _openai,
    "anthropic": _anthropic,
    "azure": _azure,
    "azureopenai": _azure,
    "bedrock": _bedrock,
    "vertex": _vertex,
    "google": _google,
    "sagemaker": _sagemaker,
    "huggingface": _huggingface,
    "hf": _huggingface,
    "ollama": _ollama,
    "replicate": _replicate,
}


def _settings(
    provider: dict[str, Any], config: Mapping[str, Any], where: str, ctx: Context
) -> dict[str, Any]:
    """``provider`` with each config key that is an assay setting; the rest listed."""
    for key in sorted(config, key=str):
        value = config[key]
        at = f"{where}.config.{key}"
        if key in ("generationConfig", "inferenceConfig") and isinstance(value, Mapping):
            for inner in sorted(value, key=str):
                _one_setting(provider, str(inner), value[inner], f"{at}.{inner}", ctx)
        else:
            _one_setting(provider, str(key), value, at, ctx)
    return provider


def _one_setting(provider: dict[str, Any], key: str, value: Any, at: str, ctx: Context) -> None:
    kind = provider["type"]
    target = _setting_name(kind, key, value)
    if target is None:
        why = _KEY_WHY if key.lower() in ("apikey", "api_key") else _NOT_SETTING
        ctx.skip_config(at, why)
        return
    name, converted = target
    if name in provider and provider[name] != converted:
        ctx.skip_config(at, f"{name} is set twice in the config: the first is kept")
        return
    provider[name] = converted


def _setting_name(kind: str, key: str, value: Any) -> tuple[str, Any] | None:
    """The assay setting (name, value) a promptfoo config key is, None when none is."""
    if key in _SAMPLING or key in _CAMEL:
        name = _CAMEL.get(key, key)
        return None if name in settings_refused_by(kind) else (name, value)
    if key == "apiKeyEnvar" and isinstance(value, str):
        return "api_key_env", value
    if key in ("apiBaseUrl", "apiEndpoint") and isinstance(value, str):
        return "base_url", value
    if key == "apiHost" and isinstance(value, str):
        host = value if "://" in value else f"https://{value}"
        return "base_url", host if kind == "azure" else host.rstrip("/") + "/v1"
    if key == "apiVersion" and kind == "azure" and isinstance(value, str):
        return "api_version", value
    if key in ("deploymentName",) and kind == "azure" and isinstance(value, str):
        return "deployment", value
    if key in ("projectId", "project") and kind == "vertex" and isinstance(value, str):
        return "project", value
    if key == "region" and kind in ("vertex", "bedrock", "sagemaker") and isinstance(value, str):
        return "region", value
    if key == "profile" and kind in ("bedrock", "sagemaker") and isinstance(value, str):
        return "profile", value
    if key == "modelType" and kind == "sagemaker" and value in _SAGEMAKER_PAYLOADS:
        return "payload", value
    if key == "cost" and isinstance(value, int | float) and not isinstance(value, bool):
        # promptfoo's cost is USD per token, for input and output alike.
        return "cost_per_1k_input", value * 1000
    if key == "headers" and isinstance(value, Mapping) and _plain_headers(value):
        return "headers", dict(value)
    return None


_SECRET_HEADER: Final = re.compile(r"auth|key|token|secret|passw|cookie|session|credential", re.I)


def _plain_headers(headers: Mapping[str, Any]) -> bool:
    """Whether every header is a literal, non-secret one-line string (what a file may hold)."""
    return all(
        isinstance(name, str)
        and isinstance(value, str)
        and not _SECRET_HEADER.search(name)
        and "{{" not in value
        and "\n" not in value
        for name, value in headers.items()
    )


def _http(name: str, config: Mapping[str, Any], where: str, ctx: Context) -> dict[str, Any] | None:
    """promptfoo's ``http`` provider (src/providers/http.ts): ``url``, ``method``, ``headers``,
    ``body``, ``transformResponse`` (``responseParser`` its older name)."""
    url = config.get("url") if name in ("http", "https") else name
    if not isinstance(url, str) or not url:
        ctx.skip_config(f"{where} ({name})", "an http provider without a url is not converted")
        return None
    provider: dict[str, Any] = {"type": "http", "url": url}
    handled = {"url"}
    if isinstance(config.get("method"), str):
        provider["method"] = str(config["method"]).upper()
        handled.add("method")
    if "body" in config:
        provider["body"] = config["body"]
        handled.add("body")
    handled |= _http_headers(provider, config.get("headers"), f"{where}.config.headers", ctx)
    for key in ("transformResponse", "responseParser"):
        if key in config:
            handled.add(key)
            _response(provider, config[key], f"{where}.config.{key}", ctx)
    for key in sorted(set(config) - handled, key=str):
        ctx.skip_config(f"{where}.config.{key}", "not an http provider setting assay has")
    return provider


def _http_headers(provider: dict[str, Any], headers: Any, at: str, ctx: Context) -> set[str]:
    if headers is None:
        return set()
    if not isinstance(headers, Mapping):
        ctx.skip_config(at, "not a mapping of headers")
        return {"headers"}
    plain: dict[str, str] = {}
    from_env: dict[str, str] = {}
    for name, value in headers.items():
        env = re.fullmatch(r"\{\{\s*env\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}", str(value))
        if str(name).lower() == "content-type" and "body" in provider:
            continue  # the http provider sets it for the body it sends
        if env:
            from_env[str(name)] = env.group(1)
        elif _plain_headers({name: value}):
            plain[str(name)] = value
        else:
            ctx.skip_config(
                f"{at}.{name}",
                "a templated or secret header is not converted (header_env takes a variable "
                "holding the whole value)",
            )
    if plain:
        provider["headers"] = plain
    if from_env:
        provider["header_env"] = from_env
    return {"headers"}


_PATH_EXPRESSION: Final = re.compile(r"^json((?:\.[A-Za-z_$][\w$]*|\[\d+\])+)$")


def _response(provider: dict[str, Any], value: Any, at: str, ctx: Context) -> None:
    """promptfoo's ``transformResponse``: a ``json.a.b[0]`` path becomes ``response_path``, a
    ``file://x.py:fn`` the python ``transform_response``; JavaScript is listed."""
    text = value.strip() if isinstance(value, str) else None
    if text is None:
        ctx.skip_config(at, "a transformResponse that is no text is not converted")
        return
    path = _PATH_EXPRESSION.match(text)
    if path:
        provider["response_path"] = path.group(1).lstrip(".")
    elif text == "text":
        pass  # the body's text: what the http provider answers when told nothing
    elif text.startswith("file://") and re.search(r"\.py:\w+$", text):
        provider["transform_response"] = ctx.script(text[len("file://") :], at)
    elif text.startswith("file://") and text.endswith(".py"):
        ctx.skip_config(at, "a python transformResponse must name its function (file.py:fn)")
    else:
        ctx.skip_config(at, "a JavaScript transformResponse is not converted")


def _python(
    name: str, config: Mapping[str, Any], where: str, ctx: Context
) -> dict[str, Any] | None:
    """``file://provider.py[:fn]`` / ``python:provider.py[:fn]``: assay's python provider with
    promptfoo's calling convention (``call_api(prompt, options, context)``)."""
    ref = name[len("file://") :] if name.startswith("file://") else name[len("python:") :]
    path = ref.split(":", 1)[0]
    if not path.endswith(".py"):
        kind = "JavaScript" if path.endswith(_SCRIPT_SUFFIXES) else "this kind of"
        ctx.skip_config(f"{where} ({name})", f"a {kind} provider file is not converted")
        return None
    copied = ctx.script(ref, where)
    provider: dict[str, Any] = {"type": "python", "function": f"file://{copied}"}
    if config:
        # Passed on to call_api as options["config"], as promptfoo passes it.
        provider["config"] = dict(config)
    return provider


def _exec(command: str, config: Mapping[str, Any], where: str, ctx: Context) -> dict[str, Any]:
    # promptfoo runs `COMMAND PROMPT OPTIONS CONTEXT` (the prompt an argument); assay's command
    # provider writes the prompt on stdin: the script must read it there.
    ctx.skip_config(
        f"{where} (exec:{command})",
        "converted to assay's command provider, which sends the prompt on stdin, not as "
        "promptfoo's first argument: check the script reads stdin",
    )
    for key in sorted(config, key=str):
        ctx.skip_config(f"{where}.config.{key}", "options of an exec provider are not converted")
    return {"type": "command", "command": command}
