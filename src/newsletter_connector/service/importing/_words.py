"""An import's refused lines in an editor's words (docs/importing.md, "What each line did"):
the column at fault by what it holds, and the reason without the API's field names, for the
admin's Import page and the command line alike.

A line is checked by the same rules as ``POST /subscribers``, whose messages name fields as
the API spells them (``consent needs both source and collected_at``); :func:`refusal_words`
says the same thing as an editor reads it.
"""

from __future__ import annotations

import re

#: What each field an import reads holds, in words (the column choices and refusals).
FIELD_WORDS = {
    "email": "Email address",
    "first_name": "First name",
    "last_name": "Last name",
    "zip": "ZIP code",
    "phone": "Phone number",
    "categories": "Topics, separated by ;",
    "prefs.email.briefings": "News briefings: how often",
    "prefs.email.puzzles": "Puzzles: how often",
    "prefs.email.onThisDay": "On this day: how often",
    "prefs.email.local": "Local news: how often",
    "prefs.sms.enabled": "Agreed to text messages (yes or no)",
    "age_range": "Age range",
    "gender": "Gender",
    "gender_self": "Gender in their own words",
    "consent_source": "Where they agreed to the newsletter",
    "consent_collected_at": "When they agreed to the newsletter",
    "name": "Whole name (the first word is the first name)",
    "attributes": "listmonk attributes",
    "source_status": "listmonk status (blocklisted: opted out)",
    "confirmed_time": "Mailchimp confirmation time (when they agreed)",
    "optin_time": "Mailchimp opt-in time (when they agreed)",
    "unsubscribed_time": "Mailchimp unsubscribe time (opted out)",
    "cleaned_time": "Mailchimp clean time (the address bounced)",
}
#: Fields a refusal names that no column choice does.
_REFUSAL_FIELDS = {
    "consent": "Where and when they agreed",
    "consent.source": "Where they agreed",
    "consent.collected_at": "When they agreed",
    "status": "Status in the file",
    "prefs": "How often they get each topic",
    "prefs.email": "How often they get each topic",
    "prefs.sms": "Agreed to text messages (yes or no)",
}
#: The rules' messages that read better said again whole, by the field they name.
_SAID_AGAIN = {
    "consent needs both source and collected_at": "both where and when they agreed are needed",
    "consent.source must be a non-blank string": "where they agreed is blank",
    "consent.source must be printable Unicode text": "where they agreed holds characters that "
    "are not text",
    "consent.collected_at must be an ISO-8601 timestamp with a time zone": "when they agreed "
    "must be a date and time with its zone, such as 2024-03-05T14:22:10Z",
    "consent.collected_at is in the future": "when they agreed is in the future",
}
#: Every API field name a message may hold that is not a word of its own (``first_name``,
#: ``prefs.email.local``), longest first so each is said whole: a fixed list of literal
#: words, so the pattern runs in time linear in its input.
_NAMES = sorted(
    (name for name in {*FIELD_WORDS, *_REFUSAL_FIELDS} if "_" in name or "." in name),
    key=len,
    reverse=True,
)
_NAME = re.compile(r"(?<![\w.])(" + "|".join(re.escape(name) for name in _NAMES) + r")(?![\w.])")


def field_words(field: str | None) -> str:
    """The column or detail ``field`` names, in words (``None``: the line as a whole)."""
    if field is None:
        return "The whole line"
    return FIELD_WORDS.get(field) or _REFUSAL_FIELDS.get(field) or field


def refusal_words(field: str | None, reason: str) -> tuple[str, str]:
    """``(column, why)`` of a refused line in words: the column by what it holds, and the
    reason with no field named as the API spells it (a message that starts with its own
    field's name is said without it, since the column is shown beside it)."""
    column = field_words(field)
    said = _SAID_AGAIN.get(reason)
    if said is None:
        said = reason
        if field is not None and said.startswith(f"{field} "):
            said = said[len(field) + 1 :].removeprefix("is ")
        said = _NAME.sub(lambda match: field_words(match[1]).lower(), said)
    return column, said[:1].upper() + said[1:]
