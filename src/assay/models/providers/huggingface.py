"""Hugging Face text generation, natively over httpx: ``POST {base_url}/models/{model}``.

base_url defaults to https://router.huggingface.co/hf-inference (the serverless Inference API;
an Inference Endpoint's or a TGI server's URL works too, with ``model`` then naming what
follows ``/models/``), and there the token is read from HF_TOKEN (``api_key_env`` names
another variable), sent as ``Authorization: Bearer``. The request is text-generation's
``{inputs, parameters}`` (``return_full_text: false``, so the prompt is not repeated in the
answer; temperature 0 as greedy ``do_sample: false``, which TGI requires), the answer
``[{generated_text}]``. The API reports no token usage. A 503 while the model loads
(``{"error": ..., "estimated_time": s}``) is retried after ``estimated_time``. A candidate's
conversation is sent flattened into one text (text generation has no roles).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Final

from assay.models.providers._base import Completion, ProviderConfig, ProviderError
from assay.models.providers.openai import HTTPProvider, environment_value, token_count

HF_URL: Final = "https://router.huggingface.co/hf-inference"
HF_KEY_ENV: Final = "HF_TOKEN"


class HuggingFaceProvider(HTTPProvider):
    def __init__(self, config: ProviderConfig):
        base_url = config.base_url or HF_URL
        key_env = config.api_key_env
        if key_env is None and base_url.rstrip("/") == HF_URL:
            key_env = HF_KEY_ENV  # the token goes to Hugging Face's endpoint only, unasked
        auth = {}
        if key_env:
            auth["Authorization"] = f"Bearer {environment_value(key_env, 'api_key_env')}"
        # A repository id (org/name) is a path of two segments, as the API writes it.
        self.model_path = f"models/{config.model}"
        super().__init__(replace(config, base_url=base_url), auth)

    async def complete(self, prompt: str) -> Completion:
        data = await self.post(tgi_body(self.config, prompt), self.model_path)
        if isinstance(data, dict) and isinstance(data.get("error"), str):
            # An error in a 200 body (the API's old habit): the server's own words.
            said = " ".join(data["error"].split())[:300]
            raise ProviderError(f"the model answered with an error: {said}", retryable=False)
        return read_generated_text(data)

    def retry_delay(self, response: Any) -> float | None:
        """Retry-After, else a loading model's ``estimated_time`` (seconds, at most 60)."""
        header = super().retry_delay(response)
        if header is not None:
            return header
        try:
            estimate = response.json().get("estimated_time")
        except (ValueError, AttributeError):
            return None
        if isinstance(estimate, bool) or not isinstance(estimate, int | float) or estimate < 0:
            return None
        return min(float(estimate), 60.0)


def tgi_body(config: ProviderConfig, prompt: str) -> dict[str, Any]:
    """Hugging Face text-generation's request: ``{inputs, parameters}``. TGI refuses a
    temperature of 0 ("must be strictly positive"): greedy decoding is ``do_sample: false``
    without one. ``return_full_text: false`` keeps the prompt out of the answer."""
    parameters: dict[str, Any] = {"return_full_text": False}
    if config.temperature > 0:
        parameters.update(do_sample=True, temperature=config.temperature)
    else:
        parameters["do_sample"] = False
    optional: dict[str, Any] = {
        "max_new_tokens": config.max_tokens,
        "top_p": config.top_p,
        "seed": config.seed,
        "stop": list(config.stop) if config.stop is not None else None,
    }
    parameters.update({k: v for k, v in optional.items() if v is not None})
    return {"inputs": prompt, "parameters": parameters}


def read_generated_text(data: Any) -> Completion:
    """The answer of a text-generation response: ``[{generated_text}]`` or one
    ``{generated_text}`` (with TGI's ``details``, when asked for, giving the finish reason and
    the generated tokens)."""
    item = data[0] if isinstance(data, list) and data else data
    text = item.get("generated_text") if isinstance(item, dict) else None
    if not isinstance(text, str):
        raise ProviderError("malformed response (no generated_text)", retryable=True)
    details = item.get("details") if isinstance(item.get("details"), dict) else {}
    finish = details.get("finish_reason")
    return Completion(
        text,
        token_count(details.get("prompt_tokens")),
        token_count(details.get("generated_tokens")),
        finish if isinstance(finish, str) else None,
    )
