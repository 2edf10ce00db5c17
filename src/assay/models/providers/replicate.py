"""Replicate predictions, natively over httpx.

``model`` is ``owner/name`` (an official model: ``POST {base_url}/models/{owner}/{name}/
predictions``) or ``owner/name:version`` (``POST {base_url}/predictions`` with ``version``).
base_url defaults to https://api.replicate.com/v1, and there the token is read from
REPLICATE_API_TOKEN (``api_key_env`` names another variable), sent as ``Authorization:
Bearer``. Each request asks ``Prefer: wait`` (Replicate holds it up to 60 s for the answer);
a prediction still ``starting`` or ``processing`` then is polled at its ``urls.get`` until it
is ``succeeded``, ``failed`` or ``canceled``, within ``timeout_s`` in all. A ``urls.get`` on
another host than base_url is not followed (the token would go there): the prediction is polled
at ``{base_url}/predictions/{id}`` instead.

The input is ``{prompt, system_prompt?, temperature, max_tokens?, max_new_tokens?, top_p?,
seed?, stop_sequences?}`` (language models on Replicate take one of the two length names, and
ignore the other; stop sequences comma-separated, as they take them); an output that is a list
of strings (a language model's token stream) is joined. ``metrics.input_token_count`` /
``output_token_count`` are the tokens. Errors carry Replicate's ``detail``.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Any, Final
from urllib.parse import urlsplit

from assay.models.providers._base import (
    Completion,
    ProviderConfig,
    ProviderError,
    ProviderTimeout,
    server_message,
)
from assay.models.providers.openai import (
    ChatMessages,
    HTTPProvider,
    environment_value,
    token_count,
)

REPLICATE_URL: Final = "https://api.replicate.com/v1"
REPLICATE_KEY_ENV: Final = "REPLICATE_API_TOKEN"
_RUNNING: Final = ("starting", "processing")
# Seconds between polls: quick at first (most predictions that outlive Prefer: wait are
# nearly done), then once a second.
_POLL_DELAYS: Final = (0.05, 0.1, 0.25, 0.5)


class ReplicateProvider(HTTPProvider):
    def __init__(self, config: ProviderConfig):
        base_url = (config.base_url or REPLICATE_URL).rstrip("/")
        key_env = config.api_key_env
        if key_env is None and base_url == REPLICATE_URL:
            key_env = REPLICATE_KEY_ENV  # the token goes to Replicate's endpoint only, unasked
        auth = {"Prefer": "wait"}
        if key_env:
            auth["Authorization"] = f"Bearer {environment_value(key_env, 'api_key_env')}"
        model, _, self.version = config.model.partition(":")
        self.create_path = "predictions" if self.version else f"models/{model}/predictions"
        super().__init__(replace(config, base_url=base_url), auth)

    def _body(self, messages: ChatMessages) -> dict[str, Any]:
        from assay.models._live import flatten_messages

        config = self.config
        system = [text for role, text in messages if role == "system"]
        rest = [(role, text) for role, text in messages if role != "system"]
        # A system prompt and one user message are Replicate's own fields; a longer
        # conversation is sent flattened (its models take one prompt).
        prompt = rest[0][1] if len(rest) == 1 else flatten_messages(rest)
        inputs: dict[str, Any] = {"prompt": prompt, "temperature": config.temperature}
        optional: dict[str, Any] = {
            "system_prompt": "\n\n".join(system) if system else None,
            "max_tokens": config.max_tokens,
            "max_new_tokens": config.max_tokens,
            "top_p": config.top_p,
            "seed": config.seed,
            "stop_sequences": ",".join(config.stop) if config.stop is not None else None,
        }
        inputs.update({k: v for k, v in optional.items() if v is not None})
        body: dict[str, Any] = {"input": inputs}
        if self.version:
            body["version"] = self.version
        return body

    async def complete(self, prompt: str) -> Completion:
        return await self.complete_messages((("user", prompt),))

    async def complete_messages(self, messages: ChatMessages) -> Completion:
        deadline = time.monotonic() + self.config.timeout_s
        prediction = await self.post(self._body(messages), self.create_path)
        polls = 0
        while _status(prediction) in _RUNNING:
            delay = _POLL_DELAYS[polls] if polls < len(_POLL_DELAYS) else 1.0
            if time.monotonic() + delay > deadline:
                raise ProviderTimeout(
                    f"the prediction was still {_status(prediction)} after "
                    f"{self.config.timeout_s:g} s"
                )
            await asyncio.sleep(delay)
            polls += 1
            prediction = await self.request("GET", self._poll_path(prediction))
        return read_prediction(prediction)

    def _poll_path(self, prediction: dict[str, Any]) -> str:
        """Where to poll: ``urls.get`` when it is on base_url's host, else predictions/{id}."""
        get = _mapping(prediction.get("urls")).get("get")
        if isinstance(get, str):
            mine, theirs = urlsplit(self.config.base_url), urlsplit(get)
            if (theirs.scheme, theirs.netloc) == (mine.scheme, mine.netloc):
                return get
        ident = prediction.get("id")
        if not isinstance(ident, str) or not ident:
            raise ProviderError("malformed response (a prediction without an id)", retryable=True)
        return f"predictions/{ident}"

    def error_message(self, response: Any) -> str | None:
        """Replicate's problem details (``{title, detail, status}``), else the usual fields."""
        try:
            data = response.json()
        except ValueError:
            return None
        detail = data.get("detail") if isinstance(data, dict) else None
        if isinstance(detail, str) and detail.strip():
            return " ".join(detail.split())[:300]
        return server_message(response.content)


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _status(prediction: Any) -> str | None:
    if not isinstance(prediction, dict):
        raise ProviderError("malformed response (not a prediction)", retryable=True)
    status = prediction.get("status")
    return status if isinstance(status, str) else None


def read_prediction(prediction: dict[str, Any]) -> Completion:
    """The answer of a finished prediction (its output joined when it is a list)."""
    status = _status(prediction)
    if status in ("failed", "canceled"):
        error = prediction.get("error")
        said = f": {' '.join(str(error).split())[:300]}" if error else ""
        raise ProviderError(f"the prediction {status}{said}", retryable=False)
    if status != "succeeded":
        raise ProviderError(f"malformed response (prediction status {status!r})", retryable=True)
    output = prediction.get("output")
    if isinstance(output, list) and all(isinstance(item, str) for item in output):
        text = "".join(output)
    elif isinstance(output, str):
        text = output
    else:
        raise ProviderError(
            "malformed response (the output is not text nor a list of strings)", retryable=False
        )
    metrics = _mapping(prediction.get("metrics"))
    return Completion(
        text,
        token_count(metrics.get("input_token_count")),
        token_count(metrics.get("output_token_count")),
        None,  # Replicate does not say why generation stopped
    )
