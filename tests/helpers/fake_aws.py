"""Bedrock's Converse API and SageMaker's InvokeEndpoint on loopback (see
:mod:`tests.helpers.fake_vendor`), each request's SigV4 signature checked by an independent
computation (:func:`sigv4_signature`: standard library only, written from AWS's specification
and checked in the tests against AWS's published ``get-vanilla`` test vector), never by
botocore, which signs.

- ``POST /model/{modelId}/converse`` (service ``bedrock``): the model id (percent-encoded in the
  path) names the behaviour (:data:`BEDROCK_MODELS`);
- ``POST /endpoints/{name}/invocations`` (service ``sagemaker``): the endpoint name names the
  behaviour (:data:`ENDPOINTS`), the body's shape says what the container speaks: ``{inputs,
  parameters}`` (TGI: ``[{generated_text}]``; a temperature of 0 is refused as TGI refuses it,
  through SageMaker's 424 ModelError) or ``{messages}`` (an OpenAI-style chat completion).

Errors are AWS's: the exception named in ``x-amzn-ErrorType``, ``{"message": ...}`` in the body
(SageMaker's ModelError: ``{"ErrorCode", "Message", "OriginalStatusCode", ...}``). A request
whose signature does not verify gets 403 InvalidSignatureException.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from typing import Any
from urllib.parse import quote, unquote

from tests.helpers.fake_vendor import FakeVendor, Reply, Seen, echo_text, words

BEDROCK_MODELS = {
    "echo": "'echo: <last text>', usage = word counts, stopReason end_turn",
    "reasoning": "a reasoningContent block, then the text",
    "max-tokens": "stopReason max_tokens",
    "flaky-429": "the first `flaky_failures` requests per prompt: 429 ThrottlingException",
    "always-500": "500 InternalServerException every time",
    "bad-request": "400 ValidationException every time",
    "malformed": "200 with a body that is not JSON",
}
ENDPOINTS = {
    "echo": "TGI: [{generated_text: 'echo: <inputs>'}]; messages: a chat completion with usage",
    "single": "TGI: one {generated_text} object, not a list",
    "flaky-429": "the first `flaky_failures` requests: 429 ThrottlingException",
    "model-error": "424 ModelError (the container answered 400)",
}
_BEDROCK = re.compile(r"/model/([^/]+)/converse")
_SAGEMAKER = re.compile(r"/endpoints/([^/]+)/invocations")
_AUTH = re.compile(
    r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, "
    r"SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})"
)


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def sigv4_signature(
    *,
    method: str,
    raw_path: str,
    query: str,
    headers: dict[str, str],
    signed_headers: list[str],
    body: bytes,
    amz_date: str,
    secret_key: str,
    region: str,
    service: str,
) -> str:
    """The SigV4 signature of a request, from AWS's specification: the canonical request
    (method, the path URI-encoded once more: twice in all for services other than S3, the
    sorted query, the signed headers lower-cased with trimmed values, the body's sha256), the
    string to sign over its hash, and the key derived from the secret, date, region and
    service."""
    pairs = sorted(
        (quote(unquote(k), safe="-_.~"), quote(unquote(v), safe="-_.~"))
        for k, _, v in (item.partition("=") for item in query.split("&") if item)
    )
    canonical = "\n".join(
        [
            method,
            quote(raw_path, safe="/~") or "/",
            "&".join(f"{k}={v}" for k, v in pairs),
            "".join(f"{name}:{' '.join(headers[name].split())}\n" for name in signed_headers),
            ";".join(signed_headers),
            hashlib.sha256(body).hexdigest(),
        ]
    )
    scope = f"{amz_date[:8]}/{region}/{service}/aws4_request"
    to_sign = "\n".join(
        ["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()]
    )
    key = _hmac(("AWS4" + secret_key).encode(), amz_date[:8])
    for part in (region, service, "aws4_request"):
        key = _hmac(key, part)
    return hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()


def aws_error(status: int, kind: str, message: str, **headers: str) -> Reply:
    header = {"x-amzn-ErrorType": f"{kind}:http://internal.amazon.com/coral/com.amazon.fake/"}
    return Reply(status, {"message": message}, headers={**header, **headers})


class FakeAWS(FakeVendor):
    """Attributes: the credentials a signature must verify with (``access_key``,
    ``secret_key``, ``session_token``: None for none) and ``region``; ``signatures`` the
    (service, region) of every verified request."""

    name = "fake-aws"

    def __init__(self) -> None:
        super().__init__()
        self.access_key = "AKIDLOOPBACKEXAMPLE"
        self.secret_key = "loopback/SECRET/key+EXAMPLE"
        self.session_token: str | None = None
        self.region = "eu-west-3"
        self.signatures: list[tuple[str, str]] = []

    def answer(self, seen: Seen) -> Reply:
        bedrock, sagemaker = _BEDROCK.fullmatch(seen.path), _SAGEMAKER.fullmatch(seen.path)
        if seen.method != "POST" or not (bedrock or sagemaker):
            return aws_error(404, "UnknownOperationException", f"no route {seen.path}")
        service = "bedrock" if bedrock else "sagemaker"
        refused = self._verify(seen, service)
        if refused is not None:
            return refused
        name = unquote((bedrock or sagemaker).group(1))  # type: ignore[union-attr]
        if bedrock:
            return self._converse(name, seen.json)
        return self._invoke(name, seen.json)

    def _verify(self, seen: Seen, service: str) -> Reply | None:
        match = _AUTH.fullmatch(seen.headers.get("authorization", ""))
        if match is None:
            return aws_error(
                403, "MissingAuthenticationTokenException", "Missing Authentication Token"
            )
        access_key, date, region, signed_for, names, signature = match.groups()
        signed = names.split(";")
        amz_date = seen.headers.get("x-amz-date", "")
        if access_key != self.access_key:
            return aws_error(403, "UnrecognizedClientException", "The security token is invalid.")
        if (region, signed_for) != (self.region, service) or not amz_date.startswith(date):
            return aws_error(
                403, "InvalidSignatureException", "Credential should be scoped correctly"
            )
        if "host" not in signed or (self.session_token and "x-amz-security-token" not in signed):
            return aws_error(403, "InvalidSignatureException", "a required header is not signed")
        if self.session_token and seen.headers.get("x-amz-security-token") != self.session_token:
            return aws_error(403, "UnrecognizedClientException", "The security token is invalid.")
        raw_path, _, query = seen.raw_path.partition("?")
        expected = sigv4_signature(
            method=seen.method,
            raw_path=raw_path,
            query=query,
            headers=seen.headers,
            signed_headers=signed,
            body=seen.raw,
            amz_date=amz_date,
            secret_key=self.secret_key,
            region=region,
            service=service,
        )
        if not hmac.compare_digest(expected, signature):
            message = (
                "The request signature we calculated does not match the signature you provided."
            )
            return aws_error(403, "InvalidSignatureException", message)
        self.signatures.append((service, region))
        return None

    def _converse(self, model: str, body: Any) -> Reply:
        try:
            prompt = str(body["messages"][-1]["content"][0]["text"])
        except (KeyError, IndexError, TypeError):
            return aws_error(400, "ValidationException", "messages is required")
        if model == "flaky-429" and self.nth(f"{model}/{prompt}") <= self.flaky_failures:
            message = "Too many requests, please wait before trying again."
            return aws_error(429, "ThrottlingException", message, **self.retry_headers())
        if model == "always-500":
            return aws_error(500, "InternalServerException", "scripted 500")
        if model == "bad-request":
            return aws_error(400, "ValidationException", "scripted 400")
        if model == "malformed":
            return Reply(200, raw=b'{"output": {"message": ')
        text = echo_text(prompt)
        content: list[dict[str, Any]] = [{"text": text}]
        if model == "reasoning":
            reasoning = {"reasoningText": {"text": "hmm", "signature": "sig"}}
            content = [{"reasoningContent": reasoning}, {"text": text}]
        usage = {"inputTokens": words(prompt), "outputTokens": words(text)}
        usage["totalTokens"] = usage["inputTokens"] + usage["outputTokens"]
        return Reply(
            200,
            {
                "output": {"message": {"role": "assistant", "content": content}},
                "stopReason": "max_tokens" if model == "max-tokens" else "end_turn",
                "usage": usage,
                "metrics": {"latencyMs": 1},
            },
        )

    def _invoke(self, endpoint: str, body: Any) -> Reply:
        if endpoint == "flaky-429" and self.nth(endpoint) <= self.flaky_failures:
            return aws_error(429, "ThrottlingException", "Rate exceeded", **self.retry_headers())
        if endpoint == "model-error":
            return _model_error(400, '{"error":"scripted container error"}')
        if isinstance(body, dict) and "messages" in body:
            prompt = str(body["messages"][-1]["content"])
            text = echo_text(prompt)
            return Reply(
                200,
                {
                    "object": "chat.completion",
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": text},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": words(prompt), "completion_tokens": words(text)},
                },
            )
        if not isinstance(body, dict) or not isinstance(body.get("inputs"), str):
            return _model_error(422, '{"error":"Failed to deserialize the JSON body"}')
        parameters = body.get("parameters") or {}
        if parameters.get("temperature") == 0:
            return _model_error(
                422,
                '{"error":"Input validation error: `temperature` must be strictly positive",'
                '"error_type":"validation"}',
            )
        generated = {"generated_text": echo_text(body["inputs"])}
        return Reply(200, generated if endpoint == "single" else [generated])


def _model_error(status: int, message: str) -> Reply:
    """SageMaker's ModelError: the container answered ``status`` with ``message``."""
    said = f'Received client error ({status}) from primary with message "{message}". See logs.'
    return Reply(
        424,
        {
            "ErrorCode": "CLIENT_ERROR_FROM_MODEL",
            "LogStreamArn": "arn:aws:logs:eu-west-3:000000000000:log-group:/aws/sagemaker/x",
            "Message": said,
            "OriginalMessage": message,
            "OriginalStatusCode": status,
        },
        headers={
            "x-amzn-ErrorType": "ModelError:http://internal.amazon.com/coral/com.amazon.sagemaker/"
        },
    )
