"""Every admin act, one row each (:class:`~.act.AdminAct`), served by
:class:`~.act.ActResource`: every form of the admin area but the login posts to one of them.

A row says what the act calls on the service (the method its CLI twin calls), its audit entry,
its flash message and where it redirects; the page modules hold what a row calls when it needs
more than one expression. A new act is a new row (and its form on a page).
"""

from __future__ import annotations

from ...errors import NewsletterError
from . import (
    admin_users,
    api_keys,
    connection,
    issues,
    login,
    messages,
    outbox_failed,
    settings,
    subscriber,
    subscribers,
)
from .act import AdminAct
from .paths import (
    ADMIN_USER_DELETE,
    ADMIN_USER_ROLE,
    ADMIN_USERS,
    API_KEYS,
    CONNECTION,
    CONNECTION_DISABLE,
    CONNECTION_TEST,
    ISSUES_DIGEST,
    LISTSOURCE,
    LISTSOURCE_OFF,
    LOGIN,
    LOGOUT,
    MESSAGE_HANDLED,
    MESSAGE_UNHANDLED,
    OUTBOX_FAILED,
    OUTBOX_FAILED_REPLAY,
    OUTBOX_REPLAY,
    OUTBOX_RETRY,
    SETTINGS,
    SUBSCRIBER_BOUNCE,
    SUBSCRIBER_EDIT,
    SUBSCRIBER_ERASE,
    SUBSCRIBER_RESEND,
    SUBSCRIBER_UNSUBSCRIBE,
    SUBSCRIBERS,
    SUBSCRIBERS_EXPORT,
)

ACTS: tuple[AdminAct, ...] = (
    AdminAct(
        path=LOGOUT,
        action="logout",
        perform=login.sign_out,
        redirect_to=LOGIN,
        audited_by_service=True,
    ),
    AdminAct(
        path=API_KEYS,
        action="api_key.create",
        perform=api_keys.create_key,
        page=api_keys.show_keys,
        shown_again=api_keys.create_refused,
    ),
    AdminAct(
        path=api_keys.revoke_path("{key_id}"),
        action="api_key.revoke",
        perform=api_keys.revoke_key,
        done="Key {target!r} revoked: it no longer works.",
        redirect_to=API_KEYS,
        page=api_keys.confirm_revoke,
        check=api_keys.key_of,
    ),
    AdminAct(
        path=SUBSCRIBER_UNSUBSCRIBE,
        action="subscriber.unsubscribe",
        perform=lambda call: subscribers.change_status(call, "unsubscribe"),
    ),
    AdminAct(
        path=SUBSCRIBER_BOUNCE,
        action="subscriber.bounce",
        perform=lambda call: subscribers.change_status(call, "bounce"),
    ),
    AdminAct(
        path=SUBSCRIBER_EDIT,
        action="subscriber.edit",
        perform=subscriber.save_details,
        shown_again=subscriber.details_refused,
    ),
    AdminAct(
        path=SUBSCRIBER_RESEND,
        action="subscriber.resend_confirmation",
        perform=subscriber.resend_confirmation,
    ),
    AdminAct(
        path=SUBSCRIBER_ERASE,
        action="subscriber.erase",
        perform=subscribers.erase,
        redirect_to=SUBSCRIBERS,
        page=subscribers.confirm_erase,
        shown_again=subscribers.erase_refused,
    ),
    AdminAct(
        path=SUBSCRIBERS_EXPORT,
        action="subscribers.export",
        perform=subscribers.export_confirmed,
    ),
    AdminAct(path=MESSAGE_HANDLED, action="message.handled", perform=messages.mark_handled),
    AdminAct(path=MESSAGE_UNHANDLED, action="message.unhandled", perform=messages.mark_unhandled),
    AdminAct(
        path=ISSUES_DIGEST,
        action="issue.digest",
        perform=issues.record_digest,
        shown_again=issues.digest_refused,
        refused=NewsletterError,
        max_form_bytes=issues.MAX_DIGEST_FORM_BYTES,
    ),
    AdminAct(
        path=LISTSOURCE,
        action="listsource.set",
        perform=settings.set_listsource,
        done="List-source surface on for user {target!r}.",
        redirect_to=SETTINGS,
        shown_again=settings.listsource_form_again,
    ),
    AdminAct(
        path=LISTSOURCE_OFF,
        action="listsource.disable",
        perform=lambda call: (
            "turned off" if call.service.admin.disable_listsource() else "already off"
        ),
        done="List-source surface {target}.",
        redirect_to=SETTINGS,
    ),
    AdminAct(
        path=OUTBOX_RETRY,
        action="outbox.retry_now",
        perform=lambda call: f"{call.service.admin.retry_outbox_now()} batch(es)",
        done="{target} waiting for a retry are due now; they go out on the next sync.",
        redirect_to=SETTINGS,
    ),
    AdminAct(
        path=OUTBOX_REPLAY,
        action="outbox.replay",
        perform=lambda call: f"{call.service.admin.replay_failed_batches()} failed batch(es)",
        done="{target} replayed with a fresh retry ladder; they go out on the next sync.",
        redirect_to=SETTINGS,
    ),
    AdminAct(
        path=OUTBOX_FAILED_REPLAY,
        action="outbox.replay",
        perform=outbox_failed.replay_batch,
        done="Batch {target} replayed with a fresh retry ladder; it goes out on the next sync.",
        redirect_to=OUTBOX_FAILED,
        shown_again=outbox_failed.replay_refused,
    ),
    AdminAct(
        path=CONNECTION,
        action="connection.set",
        perform=connection.set_connection,
        done="Connection set: {target}.",
        redirect_to=CONNECTION,
        page=connection.show_connection,
        shown_again=connection.connection_form_again,
    ),
    AdminAct(
        path=CONNECTION_DISABLE,
        action="connection.disable",
        perform=lambda call: (
            "disabled" if call.service.admin.disable_connection() else "was not configured"
        ),
        done="Connection {target}.",
        redirect_to=CONNECTION,
    ),
    AdminAct(
        path=CONNECTION_TEST,
        action="connection.test",
        perform=lambda call: call.service.admin.test_connection().message,
        done="Connection test: {target}.",
        redirect_to=CONNECTION,
        shown_again=connection.connection_untestable,
    ),
    AdminAct(
        path=ADMIN_USERS,
        action="admin_user.create",
        perform=admin_users.create_user,
        done="Admin user {target!r} created; they can sign in now.",
        redirect_to=ADMIN_USERS,
        page=admin_users.show_users,
        check=admin_users.built_in_users_only,
        shown_again=admin_users.create_refused,
    ),
    AdminAct(
        path=ADMIN_USER_DELETE,
        action="admin_user.delete",
        perform=admin_users.delete_user,
        done="Admin user {target!r} deleted; their sessions are ended.",
        redirect_to=ADMIN_USERS,
        page=admin_users.confirm_delete,
        check=admin_users.built_in_users_only,
        shown_again=admin_users.list_refused,
    ),
    AdminAct(
        path=ADMIN_USER_ROLE,
        action="admin_user.role",
        perform=admin_users.set_role,
        done="Role changed: {target}. It applies from their next page.",
        redirect_to=ADMIN_USERS,
        check=admin_users.built_in_users_only,
        shown_again=admin_users.list_refused,
    ),
)
