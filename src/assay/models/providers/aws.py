"""AWS, natively over httpx with SigV4 signing by botocore (``pip install 'assay[aws]'``):
Bedrock's Converse API and SageMaker's InvokeEndpoint.

``bedrock``: ``POST {base_url}/model/{model}/converse``, base_url default
https://bedrock-runtime.{region}.amazonaws.com, signed for service ``bedrock``. The
conversation goes as ``messages`` (each a ``content`` list of one ``text`` block), system
messages as ``system``, the sampling settings as ``inferenceConfig``; the answer is the text
blocks of ``output.message.content``, ``stopReason`` its finish reason, ``usage`` the tokens.

``sagemaker``: ``POST {base_url}/endpoints/{endpoint}/invocations``, base_url default
https://runtime.sagemaker.{region}.amazonaws.com, signed for service ``sagemaker``.
``payload`` says what the endpoint's container speaks:

- ``huggingface`` (the default; Hugging Face TGI and LMI containers): ``{inputs, parameters}``
  -> ``[{generated_text}]`` (or one ``{generated_text}``); TGI reports no token usage.
- ``openai`` (TGI's or vLLM's Messages API): ``{messages, max_tokens, ...}`` ->
  ``choices[0].message.content``, with ``usage``.

Credentials come from botocore's standard chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
AWS_SESSION_TOKEN, ``profile`` or AWS_PROFILE in ~/.aws, SSO, a container or instance role),
read when the provider starts; refreshable ones are refreshed by botocore as they expire. The
region is ``region``, else AWS_REGION / AWS_DEFAULT_REGION / the profile's. Only a signature
is sent, never the secret key. Errors name AWS's exception (the ``x-amzn-ErrorType`` header,
e.g. ThrottlingException) with its message; 429 and 5xx are retried, other 4xx are not.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any, Final
from urllib.parse import quote

import httpx  # this module is imported only when an AWS provider starts

from assay.models.providers._base import Completion, ProviderConfig, ProviderError
from assay.models.providers.huggingface import read_generated_text, tgi_body
from assay.models.providers.openai import (
    ChatMessages,
    HTTPProvider,
    read_chat_completion,
    token_count,
)

INSTALL_HINT: Final = "pip install 'assay[aws]'"
SAGEMAKER_PAYLOADS: Final = ("huggingface", "openai")


class AWSSetupError(ValueError):
    """The provider cannot start (no botocore, no credentials, no region); ``setting`` names
    the provider setting at fault for the runner's message."""

    def __init__(self, message: str, setting: str):
        super().__init__(message)
        self.setting = setting


class SigV4Auth(httpx.Auth):
    """Signs each request (its method, URL, host, content type and exact body bytes) with
    AWS Signature Version 4 for ``service`` in ``region``."""

    requires_request_body = True

    def __init__(self, credentials: Any, service: str, region: str):
        self.credentials = credentials
        self.service = service
        self.region = region

    def auth_flow(self, request: httpx.Request) -> Any:
        from botocore.auth import SigV4Auth as BotocoreSigV4
        from botocore.awsrequest import AWSRequest

        signed = AWSRequest(
            method=request.method,
            url=str(request.url),
            data=request.content,
            headers={
                "host": request.headers["host"],
                "content-type": request.headers.get("content-type", "application/json"),
            },
        )
        # Frozen per request: a refreshable credential (SSO, a role) is renewed by botocore.
        frozen = self.credentials.get_frozen_credentials()
        BotocoreSigV4(frozen, self.service, self.region).add_auth(signed)
        for name in ("Authorization", "X-Amz-Date", "X-Amz-Security-Token"):
            if name in signed.headers:
                request.headers[name] = signed.headers[name]
        yield request


def aws_session(config: ProviderConfig, service: str) -> tuple[Any, str]:
    """The credentials and region a call is signed with (botocore's chain)."""
    try:
        import botocore.exceptions
        import botocore.session
    except ImportError:
        raise AWSSetupError(
            f"the {config.type} provider needs botocore: {INSTALL_HINT}", "type"
        ) from None
    try:
        session = botocore.session.Session(profile=config.profile)
        region = (
            config.region or os.environ.get("AWS_REGION") or session.get_config_variable("region")
        )
        credentials = session.get_credentials()
    except botocore.exceptions.BotoCoreError as exc:  # e.g. ProfileNotFound
        setting = "profile" if config.profile else "type"
        raise AWSSetupError(f"AWS credentials: {exc}", setting) from None
    if not region:
        raise AWSSetupError(
            "no AWS region: set 'region' (or AWS_REGION, or a region in the AWS profile)",
            "region",
        )
    if credentials is None:
        raise AWSSetupError(
            "no AWS credentials found (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or "
            "'profile' / AWS_PROFILE naming a profile of ~/.aws, or run where a role applies)",
            "profile",
        )
    return credentials, region


class _AWSProvider(HTTPProvider):
    service = ""
    host_prefix = ""  # the default endpoint: https://{host_prefix}.{region}.amazonaws.com
    call_path = ""

    def __init__(self, config: ProviderConfig, call_path: str):
        credentials, region = aws_session(config, self.service)
        base_url = config.base_url or f"https://{self.host_prefix}.{region}.amazonaws.com"
        self.call_path = call_path
        super().__init__(replace(config, base_url=base_url), {"Accept": "application/json"})
        signer = SigV4Auth(credentials, self.service, region)
        for client in self.clients:
            client.auth = signer

    def error_message(self, response: Any) -> str | None:
        """``ExceptionName: message``: AWS names the exception in x-amzn-ErrorType
        (``ThrottlingException:http://internal.amazon.com/...``) and sends ``message`` (or
        ``Message``) in the body."""
        said = super().error_message(response)
        if said is None:
            try:
                data = response.json()
                value = data.get("Message") if isinstance(data, dict) else None
            except ValueError:
                value = None
            said = " ".join(value.split())[:300] if isinstance(value, str) else None
        kind = response.headers.get("x-amzn-errortype", "").split(":", 1)[0].strip()
        if kind and said:
            return f"{kind}: {said}"
        return kind or said


class BedrockProvider(_AWSProvider):
    service = "bedrock"
    host_prefix = "bedrock-runtime"

    def __init__(self, config: ProviderConfig):
        # A model id such as anthropic.claude-3-haiku-20240307-v1:0 or an ARN: one segment.
        super().__init__(config, f"model/{quote(config.model, safe='')}/converse")

    def _body(self, messages: ChatMessages) -> dict[str, Any]:
        config = self.config
        body: dict[str, Any] = {
            "messages": [
                {"role": role, "content": [{"text": text}]}
                for role, text in messages
                if role != "system"
            ]
        }
        system = [{"text": text} for role, text in messages if role == "system"]
        if system:
            body["system"] = system
        inference: dict[str, Any] = {"temperature": config.temperature}
        optional: dict[str, Any] = {
            "maxTokens": config.max_tokens,
            "topP": config.top_p,
            "stopSequences": list(config.stop) if config.stop is not None else None,
        }
        inference.update({k: v for k, v in optional.items() if v is not None})
        body["inferenceConfig"] = inference
        return body

    async def complete(self, prompt: str) -> Completion:
        return await self.complete_messages((("user", prompt),))

    async def complete_messages(self, messages: ChatMessages) -> Completion:
        data = await self.post(self._body(messages), self.call_path)
        try:
            blocks = data["output"]["message"]["content"]
            if not isinstance(blocks, list):
                raise TypeError
        except (KeyError, TypeError):
            raise ProviderError(
                "malformed response (no output.message.content)", retryable=True
            ) from None
        texts: list[Any] = [b.get("text") for b in blocks if isinstance(b, dict) and "text" in b]
        if not all(isinstance(text, str) for text in texts):
            raise ProviderError(
                "malformed response (a text block that is not a string)", retryable=True
            )
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        stop = data.get("stopReason")
        return Completion(
            "".join(texts),
            token_count(usage.get("inputTokens")),
            token_count(usage.get("outputTokens")),
            stop if isinstance(stop, str) else None,
        )


class SageMakerProvider(_AWSProvider):
    service = "sagemaker"
    host_prefix = "runtime.sagemaker"

    def __init__(self, config: ProviderConfig):
        self.payload = config.payload or "huggingface"
        if self.payload not in SAGEMAKER_PAYLOADS:  # the candidates file says so first
            raise AWSSetupError(
                f"payload must be one of {', '.join(SAGEMAKER_PAYLOADS)}", "payload"
            )
        if not config.endpoint:
            raise AWSSetupError("the sagemaker provider needs 'endpoint'", "endpoint")
        super().__init__(config, f"endpoints/{quote(config.endpoint, safe='')}/invocations")

    async def complete(self, prompt: str) -> Completion:
        return await self.complete_messages((("user", prompt),))

    async def complete_messages(self, messages: ChatMessages) -> Completion:
        if self.payload == "openai":
            data = await self.post(self._openai_body(messages), self.call_path)
            return read_chat_completion(data)
        from assay.models._live import flatten_messages

        prompt = messages[0][1] if len(messages) == 1 else flatten_messages(messages)
        data = await self.post(tgi_body(self.config, prompt), self.call_path)
        return read_generated_text(data)

    def _openai_body(self, messages: ChatMessages) -> dict[str, Any]:
        config = self.config
        body: dict[str, Any] = {
            "messages": [{"role": role, "content": text} for role, text in messages],
            "temperature": config.temperature,
        }
        optional: dict[str, Any] = {
            "model": config.model or None,
            "max_tokens": config.max_tokens,
            "top_p": config.top_p,
            "seed": config.seed,
            "stop": list(config.stop) if config.stop is not None else None,
        }
        body.update({k: v for k, v in optional.items() if v is not None})
        return body
