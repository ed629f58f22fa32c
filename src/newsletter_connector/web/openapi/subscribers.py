"""``/subscribers`` and ``/subscribers/{email}``; the Contact schema (docs/newsletter-api.md). The
request bodies' schemas are generated from the models the server validates them with."""

from __future__ import annotations

from typing import Any

from ...model.contact import AGE_RANGES, CADENCES, CATEGORIES, EMAIL_PREF_FIELDS, GENDERS, STATUSES
from ...model.requests import PatchRequest, SignupRequest
from .common import closed_object, error_responses, json_content, model_schemas, ok, page_of, ref

TIMESTAMP = {"type": "string", "format": "date-time"}
NULLABLE_TIMESTAMP = {"type": ["string", "null"], "format": "date-time"}
CADENCE = {"type": "string", "enum": list(CADENCES)}
URL = {"type": "string", "format": "uri"}


#: A contact's preferences: every entry is always there.
PREFS: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["email", "sms"],
    "properties": {
        "email": {
            "type": "object",
            "additionalProperties": False,
            "required": [wire for wire, _ in EMAIL_PREF_FIELDS],
            "properties": {wire: CADENCE for wire, _ in EMAIL_PREF_FIELDS},
        },
        "sms": {
            "type": "object",
            "additionalProperties": False,
            "required": ["enabled"],
            "properties": {"enabled": {"type": "boolean"}},
        },
    },
}


def _nullable_enum(values: tuple[str, ...]) -> dict[str, Any]:
    return {"type": ["string", "null"], "enum": [*values, None]}


CONTACT: dict[str, Any] = {
    "type": "object",
    "description": "A subscriber. Byte-identical to the payload of newsletter.* events.",
    "additionalProperties": False,
    "properties": {
        "email": {"type": "string", "description": "lowercase"},
        "first_name": {"type": ["string", "null"]},
        "last_name": {"type": ["string", "null"]},
        "zip": {"type": ["string", "null"], "pattern": "^[0-9]{5}$"},
        "prefs": PREFS,
        "status": {"type": "string", "enum": list(STATUSES)},
        "age_range": _nullable_enum(AGE_RANGES),
        "gender": _nullable_enum(GENDERS),
        "gender_self": {"type": ["string", "null"]},
        "categories": {
            "type": "array",
            "items": {"type": "string", "enum": list(CATEGORIES)},
            "description": "empty means all topics",
        },
        "profile_completed_at": NULLABLE_TIMESTAMP,
        "created_at": TIMESTAMP,
        "confirmed_at": NULLABLE_TIMESTAMP,
        "unsubscribed_at": NULLABLE_TIMESTAMP,
        "unsubscribe_url": URL,
        "profile_url": URL,
        "confirm_url": {**URL, "description": "present only while status is pending"},
        "phone": {"type": "string", "description": "present only with SMS consent"},
    },
}
#: Every field but the two present only in some states.
CONTACT["required"] = [
    name for name in CONTACT["properties"] if name not in ("confirm_url", "phone")
]

EMAIL_PARAMETER = {
    "name": "email",
    "in": "path",
    "required": True,
    "description": "The address, percent-encoded; case does not matter.",
    "schema": {"type": "string", "format": "email"},
    "example": "reader@example.org",
}


def _body(schema: str) -> dict[str, Any]:
    return {"required": True, "content": json_content(ref("schemas", schema))}


def fragment() -> dict[str, Any]:
    contact = ref("schemas", "Contact")
    return {
        "paths": {
            "/subscribers": {
                "get": {
                    "operationId": "listSubscribers",
                    "summary": "Walk the list in creation order by cursor",
                    "parameters": [
                        {
                            "name": "status",
                            "in": "query",
                            "required": False,
                            "schema": {"type": "string", "enum": list(STATUSES)},
                        },
                        ref("parameters", "Cursor"),
                        ref("parameters", "Limit"),
                    ],
                    "responses": {"200": page_of("Contact"), **error_responses("400")},
                },
                "post": {
                    "operationId": "createSubscriber",
                    "summary": "Sign an address up (pending, or confirmed with consent)",
                    "requestBody": _body("SignupRequest"),
                    "responses": {
                        "201": ok("A new subscriber", contact),
                        "200": ok("The address already existed; returned unchanged", contact),
                        **error_responses("400"),
                    },
                },
            },
            "/subscribers/{email}": {
                "parameters": [EMAIL_PARAMETER],
                "get": {
                    "operationId": "getSubscriber",
                    "summary": "One subscriber",
                    "responses": {
                        "200": ok("The subscriber", contact),
                        **error_responses("400", "404"),
                    },
                },
                "patch": {
                    "operationId": "updateSubscriber",
                    "summary": "Change fields; status may only become unsubscribed",
                    "requestBody": _body("PatchRequest"),
                    "responses": {
                        "200": ok("The updated subscriber", contact),
                        **error_responses("400", "404"),
                    },
                },
                "delete": {
                    "operationId": "eraseSubscriber",
                    "summary": "Erase the subscriber (not suppression: use PATCH for that)",
                    "responses": {
                        "200": ok(
                            "Erased, with the contact messages sent from the address and"
                            " every stored event carrying it",
                            ref("schemas", "Deleted"),
                        ),
                        **error_responses("400", "404"),
                    },
                },
            },
        },
        "components": {
            "schemas": {
                "Contact": CONTACT,
                **model_schemas(SignupRequest, PatchRequest),
                "Deleted": closed_object(
                    {
                        "deleted": {"const": True},
                        "email": {"type": "string"},
                        "previous_status": {"type": "string", "enum": list(STATUSES)},
                    }
                ),
            }
        },
    }
