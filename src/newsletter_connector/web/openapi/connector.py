"""The OpenAPI 3.1 document of the Connector's site-hosted endpoints (``{base_url}/api/export``):
the export the platform pulls and the feedback it posts. Not served (the prefix answers only
the connection's token); kept as ``docs/openapi-connector.json``.
"""

from __future__ import annotations

from typing import Any

from pydantic.json_schema import models_json_schema

from ...model.analytics import DailyRollup
from ...model.feedback import MAX_FEEDBACK_ITEMS, FeedbackItem
from ...service.analytics import MAX_EVENTS_LIMIT
from ..export import DEFAULT_EVENTS_LIMIT, MAX_AFTER_ID
from .common import ComponentSchema, closed_object, json_content, model_schemas, ok, ref

OUTCOMES = ("bounced", "unsubscribed", "unchanged", "suppressed", "duplicate")


def _rollup_schemas() -> dict[str, Any]:
    """``DailyRollup`` and the models it nests, as serialized (``ga4`` is always null)."""
    _, document = models_json_schema(
        [(DailyRollup, "serialization")],
        ref_template="#/components/schemas/{model}",
        schema_generator=ComponentSchema,
    )
    schemas: dict[str, Any] = document["$defs"]
    for schema in schemas.values():
        schema.pop("title", None)
        schema["required"] = list(schema["properties"])
    return schemas


def _query(name: str, description: str, schema: dict[str, Any], required: bool) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": required,
        "description": description,
        "schema": schema,
    }


def _errors(*statuses: str) -> dict[str, Any]:
    names = {"400": "BadRequest", "405": "MethodNotAllowed"}
    responses = {status: ref("responses", names[status]) for status in statuses}
    responses["404"] = ref("responses", "NotFound")
    responses["503"] = ref("responses", "DbUnavailable")
    return responses


_EVENT = closed_object(
    {
        "id": {"type": "integer", "minimum": 1},
        "occurred_at": {"type": "string", "format": "date-time"},
        "event_type": {"type": "string"},
        "visitor_id": {"type": "string"},
        "session_id": {"type": "string"},
        "path": {"type": "string"},
        "referrer": {"type": "string"},
        "props": {"type": ["object", "null"]},
    }
)


def build_connector_document() -> dict[str, Any]:
    """The whole document (a fresh dict each call)."""
    error = {
        "type": "object",
        "required": ["error", "message"],
        "additionalProperties": False,
        "properties": {
            "error": {"type": "string", "enum": ["invalid_request", "db_unavailable"]},
            "message": {"type": "string"},
        },
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Connector (site-hosted endpoints)",
            "version": "v1",
            "description": (
                "What the connected platform calls on the site: analytics export (pull) and "
                "feedback (push of bounces, complaints and unsubscribes). Every operation needs "
                "`Authorization: Bearer <connection token>`; without it, or while no connection "
                "is configured, every request gets the site's own 404 page, exactly as for an "
                "address that does not exist. Errors of an authenticated request are "
                "`{error, message}`; every response carries `Cache-Control: no-store`."
            ),
        },
        "servers": [{"url": "/api/export", "description": "relative to the service's base_url"}],
        "security": [{"connectionToken": []}],
        "paths": {
            "/status": {
                "get": {
                    "operationId": "exportStatus",
                    "summary": "Check the token against the active connection; no side effects",
                    "responses": {
                        "200": ok(
                            "The token belongs to the active connection",
                            closed_object({"ok": {"const": True}}),
                        ),
                        **_errors("400", "405"),
                    },
                }
            },
            "/events": {
                "get": {
                    "operationId": "exportEvents",
                    "summary": "Analytics events after a cursor, oldest first",
                    "parameters": [
                        _query(
                            "after_id",
                            "Events with an id strictly greater; pass `next_after_id` back.",
                            {"type": "integer", "minimum": 0, "maximum": MAX_AFTER_ID},
                            False,
                        ),
                        _query(
                            "limit",
                            f"Page size, 1-{MAX_EVENTS_LIMIT}.",
                            {
                                "type": "integer",
                                "minimum": 1,
                                "maximum": MAX_EVENTS_LIMIT,
                                "default": DEFAULT_EVENTS_LIMIT,
                            },
                            False,
                        ),
                    ],
                    "responses": {
                        "200": ok(
                            "One page; empty with `next_after_id` = `after_id` when caught up",
                            closed_object(
                                {
                                    "events": {"type": "array", "items": ref("schemas", "Event")},
                                    "next_after_id": {"type": "integer", "minimum": 0},
                                }
                            ),
                        ),
                        **_errors("400", "405"),
                    },
                }
            },
            "/rollups": {
                "get": {
                    "operationId": "exportRollups",
                    "summary": "One rollup per UTC day, computed on demand (at most 92 days)",
                    "parameters": [
                        _query(
                            "from",
                            "First UTC day, inclusive (YYYY-MM-DD).",
                            {"type": "string", "format": "date"},
                            True,
                        ),
                        _query(
                            "to",
                            "Last UTC day, inclusive, >= from, at most 92 days on.",
                            {"type": "string", "format": "date"},
                            True,
                        ),
                    ],
                    "responses": {
                        "200": ok(
                            "Every day of the range, quiet days with zeros",
                            closed_object(
                                {
                                    "rollups": {
                                        "type": "array",
                                        "items": ref("schemas", "DailyRollup"),
                                    }
                                }
                            ),
                        ),
                        **_errors("400", "405"),
                    },
                }
            },
            "/feedback": {
                "post": {
                    "operationId": "postFeedback",
                    "summary": "Report bounces, complaints and unsubscribes; each id applied once",
                    "description": (
                        "The whole body is validated before anything is applied; a 400 names "
                        "the item by index and its field. `bounce` makes a pending or confirmed "
                        "subscriber `bounced`; `complaint` and `unsubscribe` make them "
                        "`unsubscribed`; an address no subscriber has is suppressed."
                    ),
                    "requestBody": {
                        "required": True,
                        "content": json_content(
                            {
                                "type": "array",
                                "maxItems": MAX_FEEDBACK_ITEMS,
                                "items": ref("schemas", "FeedbackItem"),
                            }
                        ),
                    },
                    "responses": {
                        "200": ok(
                            "What each item did, in the order sent",
                            closed_object(
                                {
                                    "results": {
                                        "type": "array",
                                        "items": closed_object(
                                            {
                                                "id": {"type": "string"},
                                                "outcome": {"enum": list(OUTCOMES)},
                                            }
                                        ),
                                    }
                                }
                            ),
                        ),
                        **_errors("400", "405"),
                    },
                }
            },
        },
        "components": {
            "securitySchemes": {
                "connectionToken": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "The connection's token, set with `newsletter-connector "
                    "connection set`.",
                }
            },
            "schemas": {
                "Error": error,
                "Event": _EVENT,
                **_rollup_schemas(),
                **model_schemas(FeedbackItem),
            },
            "responses": {
                "BadRequest": {
                    "description": "Malformed query or body; the message names what was wrong",
                    "content": json_content(ref("schemas", "Error")),
                },
                "NotFound": {
                    "description": "Missing or wrong token, no connection, or no such endpoint: "
                    "the site's 404 page (HTML)",
                    "content": {"text/html": {"schema": {"type": "string"}}},
                },
                "MethodNotAllowed": {
                    "description": "Another method (with the token)",
                    "headers": {"Allow": {"schema": {"type": "string"}, "required": True}},
                    "content": json_content({"type": "object", "required": ["error", "message"]}),
                },
                "DbUnavailable": {
                    "description": "The database is unavailable; retry with backoff",
                    "headers": {"Retry-After": {"schema": {"type": "string"}, "required": True}},
                    "content": json_content(ref("schemas", "Error")),
                },
            },
        },
    }
