"""Authentication hooks for the surfaces (parsing headers only; the rules live in the service)."""

from __future__ import annotations

from typing import Any

import falcon

from ..errors import Unauthorized
from ..service.admin import API_KEY_PREFIX

MAX_CREDENTIAL_LENGTH = 512


def bearer_token(req: falcon.Request) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, or ``None`` if absent or
    malformed (scheme compared case-insensitively, as RFC 7235 says)."""
    header = req.get_header("Authorization")
    if not header or len(header) > MAX_CREDENTIAL_LENGTH + 7:
        return None
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    # str.split() splits at exactly the characters str.isspace() accepts, in C.
    if scheme.lower() != "bearer" or len(token.split()) != 1:
        return None
    return token


def require_api_key(
    req: falcon.Request, resp: falcon.Response, resource: Any, params: dict[str, Any]
) -> None:
    """Falcon ``before`` hook for the Newsletter API: sets ``req.context.api_key``.
    :raises Unauthorized: missing, malformed, unknown or revoked key."""
    token = bearer_token(req)
    if token is None:
        raise Unauthorized("missing or malformed Authorization header; send 'Bearer <API key>'")
    if not token.startswith(API_KEY_PREFIX):
        raise Unauthorized("malformed API key")
    req.context.api_key = resource.service.admin.authenticate_api_key(token)
