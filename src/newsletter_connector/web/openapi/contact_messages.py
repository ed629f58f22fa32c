"""``GET /contact-messages`` and the ContactMessage schema (SPEC 2.3)."""

from __future__ import annotations

from typing import Any

from .common import error_responses, ok, ref

TIMESTAMP = {"type": "string", "format": "date-time"}


def fragment() -> dict[str, Any]:
    return {
        "paths": {
            "/contact-messages": {
                "get": {
                    "operationId": "listContactMessages",
                    "summary": "The contact-form log, in arrival order (lossless)",
                    "parameters": [ref("parameters", "Cursor"), ref("parameters", "Limit")],
                    "responses": {
                        "200": ok(
                            "One page; `next_cursor` is null at the end",
                            {
                                "type": "object",
                                "required": ["data", "next_cursor"],
                                "additionalProperties": False,
                                "properties": {
                                    "data": {
                                        "type": "array",
                                        "items": ref("schemas", "ContactMessage"),
                                    },
                                    "next_cursor": {"type": ["string", "null"]},
                                },
                            },
                        ),
                        **error_responses("400"),
                    },
                }
            }
        },
        "components": {
            "schemas": {
                "ContactMessage": {
                    "type": "object",
                    "required": ["id", "email", "name", "message", "submitted_at"],
                    "additionalProperties": False,
                    "properties": {
                        "id": {"type": "string"},
                        "email": {"type": "string", "description": "the sender, to reply to"},
                        "name": {"type": ["string", "null"]},
                        "message": {"type": "string"},
                        "submitted_at": TIMESTAMP,
                    },
                }
            }
        },
    }
