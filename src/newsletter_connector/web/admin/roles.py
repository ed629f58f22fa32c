"""Which admin pages and acts each role may use: an ``owner`` every one; an ``editor`` all but
the settings (API keys, list-source credentials, the outbox, the platform connection, admin
users), the audit log, importing a list and erasing subscribers in bulk. The door (:mod:`.door`)
asks :func:`may_use` for every admin address and method, and the layout's menu and the pages'
buttons show only what the role may use. A bulk act on all matching may be stopped by the admin
who asked for it or by any owner (:func:`may_stop`)."""

from __future__ import annotations

from ...descriptors import OWNER
from .gate import Admin
from .paths import AUDIT, IMPORTS, SETTINGS, SUBSCRIBERS_ALL_ERASE, SUBSCRIBERS_BULK_ERASE

#: Why an editor is turned away from the settings and the audit log.
KEYS_AND_RECORDS = (
    "This page is for the newsletter's owners: it holds the site's keys, settings and the "
    "record of admin acts. Ask an owner if something here needs changing."
)
#: Why an editor is turned away from importing a list.
IMPORTING = (
    "Importing a list is for the newsletter's owners: one file can add, change or unsubscribe "
    "thousands of readers at once. Ask an owner to import it."
)
#: Why an editor is turned away from erasing subscribers in bulk.
BULK_ERASING = (
    "Erasing subscribers in bulk is for the newsletter's owners: it cannot be undone. You can "
    "erase one subscriber from their own page, or ask an owner."
)
#: The admin addresses, each with every address below it, that only an owner may use, and the
#: words that tell an editor why.
OWNERS_ONLY = {
    SETTINGS: KEYS_AND_RECORDS,
    AUDIT: KEYS_AND_RECORDS,
    IMPORTS: IMPORTING,
    SUBSCRIBERS_BULK_ERASE: BULK_ERASING,
    SUBSCRIBERS_ALL_ERASE: BULK_ERASING,
}


def _owners_root(path: str) -> str | None:
    return next((root for root in OWNERS_ONLY if path == root or path.startswith(root + "/")), None)


def may_use(role: str, path: str) -> bool:
    """Whether an admin with ``role`` may use the admin address ``path`` (any method)."""
    return role == OWNER or _owners_root(path) is None


def why_not(path: str) -> str:
    """The words that tell an editor why ``path`` is not theirs (the settings' when ``path`` is
    open to editors)."""
    return OWNERS_ONLY.get(_owners_root(path) or SETTINGS, KEYS_AND_RECORDS)


def may_stop(admin: Admin, requested_by: str) -> bool:
    """Whether ``admin`` may stop a bulk act asked for by the admin named ``requested_by``."""
    return admin.role == OWNER or admin.name == requested_by
