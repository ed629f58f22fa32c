"""Which admin pages each role may use: an ``owner`` every one; an ``editor`` all but the
settings (API keys, list-source credentials, the outbox, the platform connection, admin users),
the audit log and importing a list. The door (:mod:`.door`) asks :func:`may_use` for every admin
address and method, and the layout's menu shows only what the role may use."""

from __future__ import annotations

from ...descriptors import OWNER
from .paths import AUDIT, IMPORTS, SETTINGS

#: The admin addresses, each with every address below it, that only an owner may use.
OWNERS_ONLY = (SETTINGS, AUDIT, IMPORTS)


def may_use(role: str, path: str) -> bool:
    """Whether an admin with ``role`` may use the admin address ``path`` (any method)."""
    if role == OWNER:
        return True
    return not any(path == root or path.startswith(root + "/") for root in OWNERS_ONLY)
