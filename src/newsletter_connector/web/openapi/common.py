"""Shared parts of the Newsletter API document: info, security, the error body, parameters,
and the component schemas of the request models."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, models_json_schema
from pydantic_core import CoreSchema, core_schema

ERROR_CODES = ("unauthorized", "invalid_request", "consent_required", "not_found", "db_unavailable")


def ref(kind: str, name: str) -> dict[str, str]:
    return {"$ref": f"#/components/{kind}/{name}"}


class ComponentSchema(GenerateJsonSchema):
    """JSON Schema of request models as OpenAPI components: no titles made up from names, no
    defaults (an omitted field is unchanged or absent, which no default value says)."""

    def field_title_should_be_set(self, schema: CoreSchema) -> bool:
        return False

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> dict[str, Any]:
        return self.generate_inner(schema["schema"])


def model_schemas(*models: type[BaseModel]) -> dict[str, Any]:
    """``components/schemas`` entries for ``models`` and the models they nest, by class name."""
    _, document = models_json_schema(
        [(model, "validation") for model in models],
        ref_template="#/components/schemas/{model}",
        schema_generator=ComponentSchema,
    )
    schemas: dict[str, Any] = document["$defs"]
    for schema in schemas.values():
        schema.pop("title", None)
    return schemas


def json_content(schema: dict[str, Any]) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


def ok(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "content": json_content(schema)}


def closed_object(properties: dict[str, Any]) -> dict[str, Any]:
    """An object schema with exactly ``properties``, all required."""
    return {
        "type": "object",
        "required": list(properties),
        "additionalProperties": False,
        "properties": properties,
    }


def page_of(schema: str) -> dict[str, Any]:
    """The 200 response of a cursor-paged list of ``schema`` items."""
    return ok(
        "One page; `next_cursor` is null at the end",
        closed_object(
            {
                "data": {"type": "array", "items": ref("schemas", schema)},
                "next_cursor": {"type": ["string", "null"]},
            }
        ),
    )


def error_responses(*statuses: str) -> dict[str, Any]:
    """References to the shared error responses, plus 401 and 503 that every call can get."""
    names = {"400": "BadRequest", "404": "NotFound"}
    responses = {status: ref("responses", names[status]) for status in statuses}
    responses["401"] = ref("responses", "Unauthorized")
    responses["503"] = ref("responses", "DbUnavailable")
    return responses


def _error(description: str, codes: tuple[str, ...]) -> dict[str, Any]:
    schema = {
        "allOf": [
            ref("schemas", "Error"),
            {"properties": {"error": {"enum": list(codes)}}},
        ]
    }
    return {"description": description, "content": json_content(schema)}


def base_document() -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Newsletter API",
            "version": "v1",
            "description": (
                "Pull API for subscribers, issues and contact messages. Every operation needs "
                "`Authorization: Bearer <API key>`. Errors are `{error, message}`: branch on "
                "`error`. Contact records carry action links with tokens: handle responses "
                "with the same care as the API key."
            ),
        },
        "servers": [
            {
                "url": "/api/newsletter/v1",
                "description": "relative to the service's base_url (its mount point)",
            }
        ],
        "security": [{"apiKey": []}],
        "paths": {},
        "components": {
            "securitySchemes": {
                "apiKey": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "An API key (`nlk_…`) issued with `newsletter-connector "
                    "keys create`.",
                }
            },
            "schemas": {
                "Error": {
                    "type": "object",
                    "required": ["error", "message"],
                    "additionalProperties": False,
                    "properties": {
                        "error": {"type": "string", "enum": list(ERROR_CODES)},
                        "message": {"type": "string"},
                    },
                },
            },
            "parameters": {
                "Limit": {
                    "name": "limit",
                    "in": "query",
                    "required": False,
                    "description": "Page size, 1-500.",
                    "schema": {"type": "integer", "minimum": 1, "maximum": 500, "default": 100},
                },
                "Cursor": {
                    "name": "cursor",
                    "in": "query",
                    "required": False,
                    "description": "Opaque `next_cursor` of the previous page.",
                    "schema": {"type": "string"},
                },
            },
            "responses": {
                "BadRequest": _error(
                    "`invalid_request` (the message names the field) or `consent_required`",
                    ("invalid_request", "consent_required"),
                ),
                "Unauthorized": {
                    **_error("Missing, malformed, unknown or revoked API key", ("unauthorized",)),
                    "headers": {
                        "WWW-Authenticate": {"schema": {"type": "string"}, "required": True}
                    },
                },
                "NotFound": _error("No such subscriber", ("not_found",)),
                "DbUnavailable": {
                    **_error(
                        "The database is unavailable; retry with backoff", ("db_unavailable",)
                    ),
                    "headers": {"Retry-After": {"schema": {"type": "string"}, "required": True}},
                },
            },
        },
    }
