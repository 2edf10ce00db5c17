"""The OpenAI-compatible vendors whose wire format differs from OpenAI's in one place.

Every vendor of the family (openrouter, perplexity, groq, cerebras, together, fireworks,
deepseek, vllm, ollama-openai) is the openai provider itself, given the vendor's endpoint and
key variable as defaults (``DEFAULT_BASE_URLS`` / ``DEFAULT_KEY_ENVS`` in ``_base.py``). The two
here change only what differs:

- ``mistral``: the sampling seed is ``random_seed`` in Mistral's chat completions API.
- ``azure``: Azure OpenAI's deployment URL, ``{base_url}/openai/deployments/{deployment}/chat/
  completions?api-version={api_version}``, and its key in the ``api-key`` header
  (AZURE_OPENAI_API_KEY by default, read unasked only for a base_url on an Azure host). The
  deployment picks the model: ``model`` is sent only when it is set.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from assay.models.providers._base import ProviderConfig
from assay.models.providers.openai import (
    ChatMessages,
    HTTPProvider,
    OpenAIProvider,
    environment_value,
)


class MistralProvider(OpenAIProvider):
    def _body(self, messages: ChatMessages) -> dict[str, Any]:
        body = super()._body(messages)
        if "seed" in body:
            body["random_seed"] = body.pop("seed")
        return body


class AzureOpenAIProvider(OpenAIProvider):
    def __init__(self, config: ProviderConfig):
        auth = {}
        if config.api_key_env:
            auth["api-key"] = environment_value(config.api_key_env, "api_key_env")
        HTTPProvider.__init__(self, config, auth)
        deployment = quote(config.deployment or "", safe="")
        version = quote(config.api_version or "", safe="")
        self.deployment_path = (
            f"openai/deployments/{deployment}/chat/completions?api-version={version}"
        )

    async def post(self, body: dict[str, Any], path: str | None = None) -> Any:
        return await super().post(body, self.deployment_path if path is None else path)

    def _body(self, messages: ChatMessages) -> dict[str, Any]:
        body = super()._body(messages)
        if not self.config.model:
            del body["model"]
        return body
