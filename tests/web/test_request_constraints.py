"""The request bodies' constraints in the OpenAPI document are the ones the server enforces.

For every constraint the document states on a request body (a length, a pattern, an enum, a
format, the required fields, no unknown fields, SMS needing a phone), a case gives a value that
violates it and one that satisfies it. Each value is first checked against the document itself
(jsonschema), then sent: the violating one must be a 400, the satisfying one a 2xx. A constraint
the document gains without a case here fails :func:`test_every_stated_constraint_has_a_case`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import pytest
from jsonschema import Draft202012Validator, FormatChecker

from newsletter_connector.web.openapi import build_document
from tests.support.subscriber_helpers import one, patch, post

DOCUMENT = build_document()
SCHEMAS = DOCUMENT["components"]["schemas"]
#: Keywords that restrict a value (``type`` aside: every case's values have the right type).
VALUE_KEYWORDS = ("maxLength", "minLength", "pattern", "enum", "format")
OBJECT_KEYWORDS = ("required", "additionalProperties", "if")
EMAIL = "case@example.org"
PAST = "2025-06-01T12:00:00+02:00"
#: What a component requires besides the property a case is about.
REQUIRED: dict[str, dict[str, Any]] = {
    "SignupRequest": {"email": EMAIL},
    "Consent": {"source": "web", "collected_at": PAST},
}
#: Stands for the subscriber's current value of a read-only field (what GET returns).
CURRENT = object()

FORMATS = FormatChecker()


@FORMATS.checks("date-time")
def _is_date_time(value: object) -> bool:
    """RFC 3339 date-time: a date, ``T``, a time and an offset."""
    if not isinstance(value, str):
        return True
    if "T" not in value.upper():
        return False
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).tzinfo is not None
    except ValueError:
        return False


@FORMATS.checks("uri")
def _is_uri(value: object) -> bool:
    return not isinstance(value, str) or bool(urlsplit(value).scheme)


def _request_components() -> list[str]:
    """The components the request bodies use, found from the paths' requestBody references."""
    names: list[str] = []

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            target = node.get("$ref", "")
            if target.startswith("#/components/schemas/"):
                name = target.rsplit("/", 1)[1]
                if name not in names:
                    names.append(name)
                    visit(SCHEMAS[name])
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    for item in DOCUMENT["paths"].values():
        for operation in item.values():
            if isinstance(operation, dict) and "requestBody" in operation:
                visit(operation["requestBody"])
    return names


def _keywords(schema: dict[str, Any]) -> set[str]:
    found = {keyword for keyword in VALUE_KEYWORDS if keyword in schema}
    for branch in schema.get("anyOf", []):
        found |= _keywords(branch)
    return found


def stated_constraints() -> set[tuple[str, str, str]]:
    """``(component, property or "", keyword)`` of every constraint on a request body."""
    stated: set[tuple[str, str, str]] = set()
    for name in _request_components():
        schema = SCHEMAS[name]
        for keyword in OBJECT_KEYWORDS:
            if schema.get(keyword) not in (None, True):
                stated.add((name, "", keyword))
        for prop, subschema in schema.get("properties", {}).items():
            stated |= {(name, prop, keyword) for keyword in _keywords(subschema)}
    return stated


@dataclass(frozen=True)
class Case:
    """``bad`` violates ``keyword`` of ``component``'s ``prop`` (or of the whole object when
    ``prop`` is empty); ``good`` satisfies it. Values are the property's value, or the whole
    object for an object keyword."""

    component: str
    prop: str
    keyword: str
    bad: Any
    good: Any

    @property
    def id(self) -> str:
        return f"{self.component}.{self.prop or '*'}.{self.keyword}"

    def instance(self, value: Any) -> dict[str, Any]:
        """The component-level object carrying ``value``."""
        if self.prop:
            return {**REQUIRED.get(self.component, {}), self.prop: value}
        return dict(value)


def _names(component: str, prop: str) -> list[Case]:
    return [
        Case(component, prop, "maxLength", "x" * 201, "x" * 200),
        Case(component, prop, "pattern", "Ann\u0001e", "Ann-Marie O'Neil"),
    ]


SIGNUP_CASES = [
    Case("SignupRequest", "email", "maxLength", "a" * 243 + "@example.org", EMAIL),
    Case("SignupRequest", "email", "format", "not-an-address", EMAIL),
    *_names("SignupRequest", "first_name"),
    *_names("SignupRequest", "last_name"),
    Case("SignupRequest", "zip", "pattern", "1234", "02134"),
    Case("SignupRequest", "phone", "pattern", "123-456", "+1 (555) 010-0001"),
    Case("SignupRequest", "", "required", {"zip": "02134"}, {"email": EMAIL}),
    Case("SignupRequest", "", "additionalProperties", {"email": EMAIL, "x": 1}, {"email": EMAIL}),
    Case(
        "SignupRequest",
        "",
        "if",
        {"email": EMAIL, "prefs": {"sms": {"enabled": True}}},
        {"email": EMAIL, "prefs": {"sms": {"enabled": True}}, "phone": "555-010-0001"},
    ),
    Case("Consent", "source", "minLength", "", "web form"),
    Case("Consent", "source", "maxLength", "s" * 201, "s" * 200),
    Case("Consent", "source", "pattern", "   ", "web form"),
    Case("Consent", "collected_at", "format", "2025-06-01", PAST),
    Case("Consent", "", "required", {"source": "web"}, {"source": "web", "collected_at": PAST}),
    Case(
        "Consent",
        "",
        "additionalProperties",
        {"source": "web", "collected_at": PAST, "channel": "x"},
        {"source": "web", "collected_at": PAST},
    ),
    Case("PrefsChange", "", "additionalProperties", {"push": {}}, {"email": {}}),
    *[
        Case("EmailPrefsChange", cadence, "enum", "hourly", "weekly")
        for cadence in ("briefings", "puzzles", "onThisDay", "local")
    ],
    Case("EmailPrefsChange", "", "additionalProperties", {"news": "daily"}, {"local": "off"}),
    Case("SmsPrefsChange", "", "additionalProperties", {"on": False}, {"enabled": False}),
]
PATCH_CASES = [
    *_names("PatchRequest", "first_name"),
    *_names("PatchRequest", "last_name"),
    Case("PatchRequest", "gender_self", "maxLength", "x" * 201, None),
    Case("PatchRequest", "gender_self", "pattern", "a\tb", None),
    Case("PatchRequest", "zip", "pattern", "1234", "12345"),
    Case("PatchRequest", "phone", "pattern", "call me", "555 010 0001"),
    Case("PatchRequest", "age_range", "enum", "over_9000", "65_74"),
    Case("PatchRequest", "gender", "enum", "robot", "non_binary"),
    Case("PatchRequest", "status", "enum", "confirmed", "unsubscribed"),
    *[
        Case("PatchRequest", name, "format", "not a time", CURRENT)
        for name in ("profile_completed_at", "created_at", "confirmed_at", "unsubscribed_at")
    ],
    *[
        Case("PatchRequest", name, "format", "no scheme", CURRENT)
        for name in ("unsubscribe_url", "profile_url", "confirm_url")
    ],
    Case("PatchRequest", "", "additionalProperties", {"nickname": "P"}, {"zip": "54321"}),
]
CASES = SIGNUP_CASES + PATCH_CASES


def _in_signup(case: Case, value: Any) -> dict[str, Any]:
    """A whole signup body carrying the component-level object of ``case`` with ``value``."""
    instance = case.instance(value)
    return {
        "SignupRequest": lambda: instance,
        "Consent": lambda: {"email": EMAIL, "consent": instance},
        "PrefsChange": lambda: {"email": EMAIL, "prefs": instance},
        "EmailPrefsChange": lambda: {"email": EMAIL, "prefs": {"email": instance}},
        "SmsPrefsChange": lambda: {"email": EMAIL, "prefs": {"sms": instance}},
    }[case.component]()


def _errors(component: str, instance: Any) -> list[str]:
    schema = {"$ref": f"#/components/schemas/{component}", "components": DOCUMENT["components"]}
    validator = Draft202012Validator(schema, format_checker=FORMATS)
    return [error.message for error in validator.iter_errors(instance)]


def test_every_stated_constraint_has_a_case() -> None:
    stated = stated_constraints()
    covered = {(case.component, case.prop, case.keyword) for case in CASES}
    assert stated - covered == set(), "add a Case for each of these"
    assert covered - stated == set(), "these cases test constraints the document does not state"


@pytest.mark.parametrize("case", SIGNUP_CASES, ids=lambda case: case.id)
def test_signup_server_agrees_with_the_document(
    newsletter_client: Any, auth: dict[str, str], case: Case
) -> None:
    assert _errors(case.component, case.instance(case.bad)), "the bad value must violate"
    assert _errors(case.component, case.instance(case.good)) == []
    refused = post(newsletter_client, auth, _in_signup(case, case.bad))
    assert refused.status_code == 400, refused.json
    assert refused.json["error"] == (
        "consent_required" if case.component == "Consent" else "invalid_request"
    )
    accepted = post(newsletter_client, auth, _in_signup(case, case.good))
    assert accepted.status_code in (200, 201), accepted.json


@pytest.mark.parametrize("case", PATCH_CASES, ids=lambda case: case.id)
def test_patch_server_agrees_with_the_document(
    newsletter_client: Any, auth: dict[str, str], case: Case
) -> None:
    created = post(newsletter_client, auth, {"email": EMAIL, "phone": "555-010-0001"})
    current = created.json
    good = current.get(case.prop) if case.good is CURRENT else case.good
    assert _errors(case.component, case.instance(case.bad)), "the bad value must violate"
    assert _errors(case.component, case.instance(good)) == []
    refused = patch(newsletter_client, auth, EMAIL, case.instance(case.bad))
    assert refused.status_code == 400, refused.json
    assert refused.json["error"] == "invalid_request"
    assert newsletter_client.simulate_get(one(EMAIL), headers=auth).json == current
    accepted = patch(newsletter_client, auth, EMAIL, case.instance(good))
    assert accepted.status_code == 200, accepted.json


@pytest.mark.parametrize("zip_code", ["12345\n", "\n12345"])
def test_a_zip_is_five_digits_and_nothing_after_them(
    newsletter_client: Any, auth: dict[str, str], zip_code: str
) -> None:
    """The document's patterns are ECMA-262, where ``$`` is the very end: a newline after the
    digits is refused as it is by a client checking the pattern."""
    result = post(newsletter_client, auth, {"email": EMAIL, "zip": zip_code})
    assert result.status_code == 400 and "zip" in result.json["message"]
