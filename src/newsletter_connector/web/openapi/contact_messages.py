"""``GET /contact-messages`` and the ContactMessage schema
(docs/newsletter-api.md, "Contact messages")."""

from __future__ import annotations

from typing import Any

from .common import closed_object, error_responses, page_of, ref

TIMESTAMP = {"type": "string", "format": "date-time"}


def fragment() -> dict[str, Any]:
    return {
        "paths": {
            "/contact-messages": {
                "get": {
                    "operationId": "listContactMessages",
                    "summary": "The contact-form log, in arrival order (lossless)",
                    "parameters": [ref("parameters", "Cursor"), ref("parameters", "Limit")],
                    "responses": {"200": page_of("ContactMessage"), **error_responses("400")},
                }
            }
        },
        "components": {
            "schemas": {
                "ContactMessage": closed_object(
                    {
                        "id": {"type": "string"},
                        "email": {"type": "string", "description": "the sender, to reply to"},
                        "name": {"type": ["string", "null"]},
                        "message": {"type": "string"},
                        "submitted_at": TIMESTAMP,
                    }
                )
            }
        },
    }
