"""``GET /status``."""

from __future__ import annotations

from typing import Any

from .common import ok


def fragment() -> dict[str, Any]:
    return {
        "paths": {
            "/status": {
                "get": {
                    "operationId": "getStatus",
                    "summary": "Check the key and the API version (does not touch the list)",
                    "responses": {
                        "200": ok(
                            "The key works",
                            {
                                "type": "object",
                                "required": ["ok", "version", "key"],
                                "additionalProperties": False,
                                "properties": {
                                    "ok": {"const": True},
                                    "version": {"const": "v1"},
                                    "key": {"type": "string", "description": "the key's label"},
                                },
                            },
                        ),
                        "401": {"$ref": "#/components/responses/Unauthorized"},
                        "503": {"$ref": "#/components/responses/DbUnavailable"},
                    },
                }
            }
        }
    }
