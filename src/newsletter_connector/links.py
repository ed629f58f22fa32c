"""Action links in contact records: ``{base_url}/<action>/<token>``, the paths the reader pages
serve. Tokens are URL-safe already (``secrets.token_urlsafe``), so they are joined as they are.
"""

from __future__ import annotations

from .settings import Settings

CONFIRM_PATH = "/confirm"
UNSUBSCRIBE_PATH = "/unsubscribe"
PROFILE_PATH = "/profile"
SIGNUP_PATH = "/signup"
CONTACT_PATH = "/contact"


def confirm_url(settings: Settings, confirm_token: str) -> str:
    """The double opt-in link: ``{base_url}/confirm/{confirm_token}``."""
    return f"{settings.public_base_url}{CONFIRM_PATH}/{confirm_token}"


def unsubscribe_url(settings: Settings, unsubscribe_token: str) -> str:
    """The opt-out link: ``{base_url}/unsubscribe/{unsubscribe_token}``."""
    return f"{settings.public_base_url}{UNSUBSCRIBE_PATH}/{unsubscribe_token}"


def profile_url(settings: Settings, profile_token: str) -> str:
    """The preference page: ``{base_url}/profile/{profile_token}``."""
    return f"{settings.public_base_url}{PROFILE_PATH}/{profile_token}"
