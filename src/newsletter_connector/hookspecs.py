"""The hook catalogue: every hook a plugin can implement.

Plugins are found through the ``newsletter_connector`` entry-point group, or passed to
``create_app(plugins=[...])``. Built-ins are ordinary plugins registered with ``trylast``, so an
installed plugin offering the same name is seen first. Every hook is synchronous.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from .descriptors import (
        AdminUser,
        IssueRenderer,
        OutboundTransport,
        SubscriberStore,
    )
    from .settings import Settings

PROJECT = "newsletter_connector"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def newsletter_storage_backends() -> list[SubscriberStore]:
    """Offer storage backends: where the built-in store keeps subscribers (a host's own table,
    say), everything else staying in its own tables of the same database and transaction.

    :return: a list of :class:`~newsletter_connector.descriptors.SubscriberStore`. The setting
        ``storage_backend`` picks one by name (built-in: ``sql``, its own table); the first
        plugin offering a name wins.
    """


@hookspec
def newsletter_issue_renderers() -> list[IssueRenderer]:
    """Offer issue renderers.

    :return: a list of :class:`~newsletter_connector.descriptors.IssueRenderer`. The setting
        ``issue_renderer`` picks one by name; the first plugin offering a name wins.
    """


@hookspec
def newsletter_outbound_transports() -> list[OutboundTransport]:
    """Offer outbound transports for the sync runner.

    :return: a list of :class:`~newsletter_connector.descriptors.OutboundTransport`; the
        connection's ``transport`` picks one by name (built-ins: ``events`` and ``platform``).
        The runner calls ``factory(connection, http_client)`` with its ``httpx.Client``
        (trusted CAs, no redirects, a 15-second deadline per request); the contract of the
        object built is in ``newsletter_connector.storage.transport``.
    """


@hookspec(firstresult=True)
def newsletter_issue_content(kind: str, date: str, settings: Settings) -> dict[str, Any] | None:
    """Supply the sections of a digest run: how a host feeds its content.

    :param kind: ``daily``, ``weekly``, ``manual`` or ``test``.
    :param date: the issue date, ``YYYY-MM-DD`` (UTC).
    :return: ``briefing`` ({date, title, url}), ``on_this_day`` ([{year, text, url}]),
        ``puzzle_hint`` (string), ``topics`` ([{slug, label, summary, items: [{title, url,
        source}]}]) and optionally ``subject``; or ``None`` to let another plugin answer.
    """


@hookspec(firstresult=True)
def newsletter_admin_user(environ: dict[str, Any]) -> AdminUser | None:
    """Say who is signed in to the host as an admin: how a host lets its own admins into the
    admin area (``{base_url}/admin``) with its own sign-in.

    When any plugin implements this hook the built-in admin login is not used at all.

    :param environ: the WSGI environ of the request (the host's session cookie, or whatever
        its middleware put there, identifies the user).
    :return: an :class:`~newsletter_connector.descriptors.AdminUser` for a signed-in host
        admin; ``None`` otherwise, which the admin area answers with a redirect to setting
        ``admin_login_url`` when set, else a 403 page asking to sign in to the site first.
    """
