"""``GET /status``."""

from __future__ import annotations

from typing import Any

from .common import closed_object, error_responses, ok


def fragment() -> dict[str, Any]:
    key = {"type": "string", "description": "the key's label"}
    body = closed_object({"ok": {"const": True}, "version": {"const": "v1"}, "key": key})
    return {
        "paths": {
            "/status": {
                "get": {
                    "operationId": "getStatus",
                    "summary": "Check the key and the API version (does not touch the list)",
                    "responses": {"200": ok("The key works", body), **error_responses()},
                }
            }
        }
    }
