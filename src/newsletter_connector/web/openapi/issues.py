"""The issue endpoints' paths and schemas (docs/issues.md, "Reading issues")."""

from __future__ import annotations

from typing import Any

from ...service.digest_schedule import ALL_KINDS
from ...service.issues import DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT, UNSUBSCRIBE_PLACEHOLDER
from .common import json_content, ref

_URL = {"type": "string", "format": "uri", "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://"}
_DATE = {"type": "string", "format": "date", "pattern": r"^\d{4}-\d{2}-\d{2}$"}


def _ref(name: str) -> dict[str, str]:
    return ref("schemas", name)


def _error(description: str, *codes: str) -> dict[str, Any]:
    return {
        "description": f"{description} (`error`: {', '.join(f'`{c}`' for c in codes)})",
        "content": json_content(_ref("Error")),
    }


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    """An object schema with exactly ``properties``, all required."""
    return {
        "type": "object",
        "additionalProperties": False,
        "required": list(properties),
        "properties": properties,
    }


_UNAUTHORIZED = _error("Missing, malformed, unknown or revoked API key", "unauthorized")
_UNAVAILABLE = {
    **_error("The database is temporarily unavailable; retry with backoff", "db_unavailable"),
    "headers": {"Retry-After": {"description": "Seconds to wait", "schema": {"type": "integer"}}},
}

SCHEMAS: dict[str, Any] = {
    "IssueBriefing": _object({"date": _DATE, "title": {"type": "string"}, "url": _URL}),
    "IssueOnThisDay": _object(
        {"year": {"type": "integer"}, "text": {"type": "string"}, "url": _URL}
    ),
    "IssueTopicItem": _object(
        {"title": {"type": "string"}, "url": _URL, "source": {"type": "string"}}
    ),
    "IssueTopic": _object(
        {
            "slug": {"type": "string", "pattern": "^[a-z0-9][a-z0-9_-]{0,63}$"},
            "label": {"type": "string"},
            "summary": {"type": "string"},
            "items": {"type": "array", "items": _ref("IssueTopicItem")},
        }
    ),
    "IssueSections": _object(
        {
            "briefing": _ref("IssueBriefing"),
            "on_this_day": {"type": "array", "items": _ref("IssueOnThisDay")},
            "puzzle_hint": {"type": "string"},
            "topics": {"type": "array", "items": _ref("IssueTopic")},
        }
    ),
    "Issue": {
        "type": "object",
        "description": "A newsletter issue; one is recorded on every digest run. It has no "
        "personalisation: segmentation is the platform's job.",
        "additionalProperties": False,
        "required": [
            "id",
            "kind",
            "cadence",
            "date",
            "subject",
            "site_url",
            "postal_address",
            "sections",
        ],
        "properties": {
            "id": {"type": "string", "pattern": "^[0-9]+$", "examples": ["42"]},
            "kind": {
                "type": "string",
                "enum": list(ALL_KINDS),
                "description": "daily and weekly are scheduled; manual and test are "
                "operator-initiated",
            },
            "cadence": {"type": "string", "examples": ["daily"]},
            "date": _DATE,
            "subject": {"type": "string"},
            "site_url": _URL,
            "postal_address": {"type": ["string", "null"]},
            "sections": _ref("IssueSections"),
            "html": {
                "type": "string",
                "description": "The rendered edition. Contains the literal placeholder "
                f"`{UNSUBSCRIBE_PLACEHOLDER}`, which must be replaced by the recipient's "
                "unsubscribe_url before sending.",
            },
            "text": {
                "type": ["string", "null"],
                "description": "Plain-text alternative of `html`, with the same placeholder; "
                "null when the configured renderer makes none.",
            },
        },
    },
    "IssueWithHtml": {
        "allOf": [_ref("Issue"), {"required": ["html", "text"]}],
    },
    "IssueList": _object(
        {
            "data": {
                "type": "array",
                "description": "Most recently recorded first",
                "items": _ref("Issue"),
            }
        }
    ),
}

PATHS: dict[str, Any] = {
    "/issues/latest": {
        "get": {
            "operationId": "getLatestIssue",
            "tags": ["issues"],
            "summary": "The most recently recorded issue, with its rendered HTML",
            "description": "Poll once per send. Replace the literal "
            f"`{UNSUBSCRIBE_PLACEHOLDER}` per recipient before mailing.",
            "responses": {
                "200": {
                    "description": "The latest issue, including `html` and `text`",
                    "content": json_content(_ref("IssueWithHtml")),
                },
                "401": _UNAUTHORIZED,
                "404": _error("No issue has been built yet", "not_found"),
                "503": _UNAVAILABLE,
            },
        }
    },
    "/issues": {
        "get": {
            "operationId": "listIssues",
            "tags": ["issues"],
            "summary": "Recorded issues, newest first",
            "description": "The most recent `limit` issues. `html` and `text` are omitted "
            "unless `include=html`.",
            "parameters": [
                {
                    "name": "limit",
                    "in": "query",
                    "required": False,
                    "schema": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_LIST_LIMIT,
                        "default": DEFAULT_LIST_LIMIT,
                    },
                },
                {
                    "name": "include",
                    "in": "query",
                    "required": False,
                    "description": "`html` adds each issue's `html` and `text`",
                    "schema": {"type": "string", "enum": ["html"]},
                },
            ],
            "responses": {
                "200": {
                    "description": "`{data: [issue]}`",
                    "content": json_content(_ref("IssueList")),
                },
                "400": _error(
                    "limit is not an integer in 1-500, include is not html, or a parameter "
                    "is repeated",
                    "invalid_request",
                ),
                "401": _UNAUTHORIZED,
                "503": _UNAVAILABLE,
            },
        }
    },
}


def fragment() -> dict[str, Any]:
    """The issue endpoints' paths and schemas."""
    return {"paths": PATHS, "components": {"schemas": SCHEMAS}}
