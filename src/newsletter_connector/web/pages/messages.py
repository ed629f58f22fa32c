"""What readers are told when a field is not right: the service's ``InvalidRequest.field``,
translated by the page's ``field_map`` into a form field, gets a message in plain words."""

from __future__ import annotations

from collections.abc import Mapping

from ...errors import InvalidRequest
from ...i18n import N_

FRIENDLY: dict[str, str] = {
    "email": N_("Enter your email address in the form name@example.com"),
    "zip": N_("Enter a ZIP code of exactly 5 digits, like 12345, or leave it empty"),
    "frequency": N_("Choose daily or weekly"),
    "name": N_("Enter your name in 200 characters or fewer, or leave it empty"),
    "message": N_("Enter your message, in 10,000 characters or fewer"),
    "first_name": N_("Enter your first name in 200 characters or fewer, or leave it empty"),
    "last_name": N_("Enter your last name in 200 characters or fewer, or leave it empty"),
    "phone": N_(
        "Enter a phone number with at least 7 digits, using only digits, spaces and + ( ) . -"
    ),
    "sms": N_("To get text messages, enter your mobile phone number below, or untick this box"),
    "categories": N_("Choose topics from the list"),
    "age_range": N_("Choose an age range, or “Prefer not to say”"),
    "gender": N_("Choose one of the options, or “Prefer not to say”"),
    "gender_self": N_(
        "To describe your gender in your own words, choose “I will describe "
        "myself” above; use 200 characters or fewer"
    ),
    "cadence": N_("Choose daily, weekly or never"),
}


def friendly_error(
    error: InvalidRequest, field_map: Mapping[str, str], default_field: str
) -> dict[str, str]:
    """``{form field: message}`` for ``error``: the form field the service's field maps to
    (``default_field`` when it maps to none) and the plain-words message for it."""
    form_field = field_map.get(error.field or "", default_field)
    key = "cadence" if form_field.startswith("cadence_") else form_field
    return {form_field: FRIENDLY.get(key, error.message)}
