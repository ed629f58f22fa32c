"""What every admin page shares: the gate, the CSRF check, the renderer, the flash message, the
audit record and the redirect (the shape of an act built from them is :mod:`.act`).

Pages parse the form and call the SAME service methods the CLI calls; every rule lives there.
"""

from __future__ import annotations

from typing import Any

import falcon

from ...service import NewsletterService
from ..pages.forms import MAX_FORM_BYTES, FormData, read_form
from .csrf import FIELD_NAME, AdminCsrf
from .flash import Flash
from .gate import Admin, AdminGate, OutsideRole
from .input import AdminInputRefused, check_fields
from .issue_problems import control_character_words
from .paths import HOME, ISSUES_COMPOSE, ISSUES_COMPOSE_RECORD
from .rendering import AdminRenderer
from .upload import Upload, read_upload

#: Shown for a form sent without its valid token (or from another site): nothing was changed.
REFUSED_FORM = (
    "This form could not be accepted, so nothing was changed. Go back, reload the page and "
    "send it again."
)


#: The title of a refusal that has no words of its own in :data:`ERROR_WORDS`.
NOT_ACCEPTED = "Not accepted"
NOTHING_CHANGED = "Nothing was changed."

#: An error page's title and words, by status code.
ERROR_WORDS: dict[int, tuple[str, str]] = {
    404: ("Nothing here", "Nothing was found at this address: it may have been removed."),
    405: (
        "Not a page",
        "This address is where a button sends its form; it is not a page to open.",
    ),
    409: ("Not possible now", "The request conflicts with what is stored now; nothing changed."),
    503: (
        "Database unavailable",
        "The database cannot be reached just now; nothing changed. Try again shortly.",
    ),
    500: (
        "Something went wrong",
        "The request could not be completed. Try again; if it keeps happening, tell the "
        "site's developers.",
    ),
}


class AdminPages:
    """The shared dependencies of the admin pages of one app."""

    def __init__(self, service: NewsletterService) -> None:
        self.service = service
        self.settings = service.settings
        self.gate = AdminGate(service)
        self.csrf = AdminCsrf(service.context)
        self.flash = Flash(service.context, path=self.gate.cookie_path, secure=self.gate.secure)
        self.renderer = AdminRenderer(service.settings.public_base_url, service.settings.site_name)

    def url(self, path: str) -> str:
        """The public address of ``path`` under ``base_url``."""
        return self.settings.public_base_url + path

    def show(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        admin: Admin,
        template: str,
        *,
        status: str = falcon.HTTP_200,
        **context: Any,
    ) -> None:
        """A page for a signed-in ``admin``: the layout's navigation, the pending flash
        message and a CSRF token for its forms."""
        self.renderer.render(
            resp,
            template,
            status=status,
            admin=admin,
            csrf_token=self.csrf.token(admin),
            flash=self.flash.take(req, resp),
            **context,
        )

    def bad_request(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        admin: Admin,
        *,
        current: str,
        title: str,
        message: str,
        back_to: str,
        back_text: str,
    ) -> None:
        """400: a page saying what was wrong with the request, with a link to the app path
        ``back_to``."""
        self.show(
            req,
            resp,
            admin,
            "message.html",
            status=falcon.HTTP_400,
            current=current,
            title=title,
            message=message,
            link_url=self.url(back_to),
            link_text=back_text,
        )

    def error_page(
        self, req: falcon.Request, resp: falcon.Response, status: str, message: str = ""
    ) -> bool:
        """The error page of ``status`` in the admin layout, with the menu, when the door let
        a signed-in admin in (true); false for any other request, which the site's own error
        page answers. A refusal without words of its own in :data:`ERROR_WORDS` (a form not
        sent as UTF-8, too large, with too many fields) says ``message``, what was wrong, and
        that nothing was changed; only a server error says something went wrong."""
        admin = getattr(req.context, "admin", None)
        if not isinstance(admin, Admin):
            return False
        code = int(status.split()[0])
        if code in ERROR_WORDS:
            title, message = ERROR_WORDS[code]
        elif code < 500 and message:
            said = message.rstrip(".")
            title, message = NOT_ACCEPTED, f"{said[:1].upper()}{said[1:]}. {NOTHING_CHANGED}"
        else:
            title, message = ERROR_WORDS[500]
        self.show(
            req,
            resp,
            admin,
            "message.html",
            status=status,
            title=title,
            message=message,
            link_url=self.url(HOME),
            link_text="Back to the dashboard",
        )
        return True

    def refuse(self, resp: falcon.Response, admin: Admin | None = None) -> None:
        """403: a form without its valid token, or from another site."""
        self.renderer.render(
            resp,
            "message.html",
            status=falcon.HTTP_403,
            admin=admin,
            csrf_token=self.csrf.token(admin) if admin else "",
            title="Form refused",
            message=REFUSED_FORM,
        )

    def host_sign_in_required(
        self, req: falcon.Request, resp: falcon.Response, ex: Exception, params: Any
    ) -> None:
        """403 for a signed-out visitor while the host signs admins in and names no login
        page (error handler of :class:`~.gate.HostSignInRequired`)."""
        self.renderer.render(
            resp,
            "message.html",
            status=falcon.HTTP_403,
            title="Sign in to the site first",
            message="The newsletter admin area is for the site's admins: sign in to the site "
            "first, then come back to this page.",
            link_url=self.settings.effective_site_url,
            link_text=f"Go to {self.settings.site_name}",
        )

    def outside_role(
        self, req: falcon.Request, resp: falcon.Response, ex: OutsideRole, params: Any
    ) -> None:
        """403: a page or act the admin's role may not use, and why (error handler of
        :class:`~.gate.OutsideRole`); the menu shows what it may use."""
        self.show(
            req,
            resp,
            ex.admin,
            "message.html",
            status=falcon.HTTP_403,
            title="Not open to editors",
            message=ex.why,
            link_url=self.url(HOME),
            link_text="Back to the dashboard",
        )

    def input_refused(
        self, req: falcon.Request, resp: falcon.Response, ex: AdminInputRefused, params: Any
    ) -> None:
        """400 naming the field that held a control character (error handler of
        :class:`~.input.AdminInputRefused`; a composer field by its place and label);
        nothing was changed."""
        message = None
        if req.path in (ISSUES_COMPOSE, ISSUES_COMPOSE_RECORD):
            message = control_character_words(ex.field)
        self.renderer.render(
            resp,
            "message.html",
            status=falcon.HTTP_400,
            title="Not accepted",
            message=message or ex.message,
            link_url=self.url(HOME),
            link_text="Back to the admin area",
        )

    def read_checked_form(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        admin: Admin,
        *,
        max_bytes: int = MAX_FORM_BYTES,
    ) -> FormData | None:
        """The submitted form (413 over ``max_bytes``) when its CSRF check passes; else
        answers 403 and gives None.

        :raises AdminInputRefused: a field holding a control character (see :mod:`.input`).
        """
        form = read_form(req, max_bytes=max_bytes)
        if self.csrf.check(req, admin, form.get(FIELD_NAME)) != "ok":
            self.refuse(resp, admin)
            return None
        check_fields(form.fields)
        return form

    def read_checked_upload(
        self, req: falcon.Request, resp: falcon.Response, admin: Admin, file_field: str
    ) -> tuple[FormData | None, Upload | None]:
        """The fields of a form uploading a file in ``file_field``, and the file, when the
        form's CSRF check passes; else answers 403 and gives ``(None, None)``.

        :raises AdminInputRefused: a field holding a control character (see :mod:`.input`).
        """
        limit = self.service.settings.import_max_bytes
        form, upload = read_upload(req, file_field=file_field, max_file_bytes=limit)
        if self.csrf.check(req, admin, form.get(FIELD_NAME)) != "ok":
            self.refuse(resp, admin)
            return None, None
        check_fields(form.fields)
        return form, upload

    def audit(
        self,
        req: falcon.Request,
        admin: Admin,
        action: str,
        target: str | None,
        detail: str | None = None,
    ) -> None:
        """Record ``admin``'s act (``target`` names what it touched, ``detail`` what else the
        act recorded: never a secret)."""
        self.service.admin_audit.record(
            admin.name, action, target, client_hash=self.gate.client_hash(req), detail=detail
        )

    def redirect(self, resp: falcon.Response, path: str) -> None:
        """303 to the app path ``path`` (keeping the cookies set on ``resp``)."""
        resp.status = falcon.HTTP_303
        resp.location = self.url(path)
