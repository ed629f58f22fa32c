"""What readers are told when a field is not right: the service's ``InvalidRequest.field``,
translated by the page's ``field_map`` into a form field, gets a message in plain words."""

from __future__ import annotations

from collections.abc import Mapping

from ...errors import InvalidRequest

FRIENDLY: dict[str, str] = {
    "email": "Enter your email address in the form name@example.com",
    "zip": "Enter a ZIP code of exactly 5 digits, like 12345, or leave it empty",
    "frequency": "Choose daily or weekly",
    "name": "Enter your name in 200 characters or fewer, or leave it empty",
    "message": "Enter your message, in 10,000 characters or fewer",
    "first_name": "Enter your first name in 200 characters or fewer, or leave it empty",
    "last_name": "Enter your last name in 200 characters or fewer, or leave it empty",
    "phone": "Enter a phone number with at least 7 digits, using only digits, spaces and + ( ) . -",
    "sms": "To get text messages, enter your mobile phone number below, or untick this box",
    "categories": "Choose topics from the list",
    "age_range": "Choose an age range, or “Prefer not to say”",
    "gender": "Choose one of the options, or “Prefer not to say”",
    "gender_self": "To describe your gender in your own words, choose “I will describe "
    "myself” above; use 200 characters or fewer",
    "cadence": "Choose daily, weekly or never",
}


def friendly_error(
    error: InvalidRequest, field_map: Mapping[str, str], default_field: str
) -> dict[str, str]:
    """``{form field: message}`` for ``error``: the form field the service's field maps to
    (``default_field`` when it maps to none) and the plain-words message for it."""
    form_field = field_map.get(error.field or "", default_field)
    key = "cadence" if form_field.startswith("cadence_") else form_field
    return {form_field: FRIENDLY.get(key, error.message)}
