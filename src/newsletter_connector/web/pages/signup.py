"""``/signup``: email, ZIP and frequency → a pending subscriber and a "check your email" page.

The same page follows whatever the address's state, and for a filled honeypot, so the form does
not reveal who is on the list.
"""

from __future__ import annotations

from typing import Any

from ...links import SIGNUP_PATH
from .choices import SIGNUP_FREQUENCIES, TOPICS
from .forms import FormData
from .public_form import PublicFormPage

DONE_PATH = SIGNUP_PATH + "/thanks"
DEFAULT_FREQUENCY = "daily"
#: Service field → form field.
FIELD_MAP = {"email": "email", "zip": "zip", "prefs": "frequency"} | {
    f"prefs.email.{topic.wire}": "frequency" for topic in TOPICS
}


def signup_body(values: dict[str, str]) -> dict[str, Any]:
    """The ``subscribe`` body for the form: the frequency becomes every email cadence."""
    body: dict[str, Any] = {"email": values["email"], "zip": values["zip"] or None}
    if values["frequency"]:
        body["prefs"] = {"email": {topic.wire: values["frequency"] for topic in TOPICS}}
    return body


class SignupPage(PublicFormPage):
    name = "signup"
    template = "signup.html"
    path = SIGNUP_PATH
    done_path = DONE_PATH
    field_map = FIELD_MAP
    fallback_field = "email"

    def values(self, form: FormData | None) -> dict[str, str]:
        if form is None:
            return {"email": "", "zip": "", "frequency": DEFAULT_FREQUENCY}
        return {
            "email": form.get("email").strip(),
            "zip": form.get("zip").strip(),
            "frequency": form.get("frequency"),
        }

    def submit(self, values: dict[str, str]) -> None:
        self.pages.service.subscribers.subscribe(signup_body(values), by_reader=True)

    def context(self) -> dict[str, Any]:
        return {"frequencies": SIGNUP_FREQUENCIES}
