"""The reader pages: signup, confirm, unsubscribe (RFC 8058 one-click), profile and contact.

Plain HTML forms (no JavaScript) from Jinja2 templates a host may override, with autoescaping,
CSRF tokens and a honeypot field, at the link shapes of :mod:`newsletter_connector.links`.
"""

from __future__ import annotations

import falcon

from ...links import CONFIRM_PATH, CONTACT_PATH, PROFILE_PATH, SIGNUP_PATH, UNSUBSCRIBE_PATH
from ...service import NewsletterService
from .assets import StylesheetResource
from .base import ReaderPages
from .confirm import ConfirmPage
from .contact import DONE_PATH as CONTACT_DONE_PATH
from .contact import ContactPage
from .profile import ProfilePage
from .public_form import DonePage
from .rendering import STYLESHEET_PATH
from .signup import DONE_PATH as SIGNUP_DONE_PATH
from .signup import SignupPage
from .unsubscribe import UnsubscribePage

__all__ = ["ReaderPages", "add_routes"]


def add_routes(
    app: falcon.App[falcon.Request, falcon.Response], service: NewsletterService
) -> ReaderPages:
    """Mount the reader pages on ``app``; return their shared renderer (the app's error
    handlers draw reader-facing error pages with it)."""
    pages = ReaderPages(service)
    app.add_route(SIGNUP_PATH, SignupPage(pages))
    app.add_route(SIGNUP_DONE_PATH, DonePage(pages, "signup_done.html"))
    app.add_route(CONTACT_PATH, ContactPage(pages))
    app.add_route(CONTACT_DONE_PATH, DonePage(pages, "contact_done.html"))
    app.add_route(CONFIRM_PATH + "/{token}", ConfirmPage(pages))
    app.add_route(UNSUBSCRIBE_PATH + "/{token}", UnsubscribePage(pages))
    app.add_route(PROFILE_PATH + "/{token}", ProfilePage(pages))
    app.add_route(STYLESHEET_PATH, StylesheetResource(service.settings))
    return pages
