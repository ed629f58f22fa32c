"""``/contact``: email, optional name and message → one row of the lossless contact-message log
(``service.messages.record``). A filled honeypot gets the same "sent" page and stores nothing.
"""

from __future__ import annotations

from ...links import CONTACT_PATH
from .forms import FormData
from .public_form import PublicFormPage

DONE_PATH = CONTACT_PATH + "/thanks"


class ContactPage(PublicFormPage):
    name = "contact"
    template = "contact.html"
    path = CONTACT_PATH
    done_path = DONE_PATH
    field_map = {"email": "email", "name": "name", "message": "message"}
    fallback_field = "message"

    def values(self, form: FormData | None) -> dict[str, str]:
        if form is None:
            return {"email": "", "name": "", "message": ""}
        return {
            "email": form.get("email").strip(),
            "name": form.get("name").strip(),
            "message": form.get("message"),
        }

    def submit(self, values: dict[str, str]) -> None:
        self.pages.service.messages.record(
            values["email"], values["name"] or None, values["message"]
        )
