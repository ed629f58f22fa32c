"""``/admin/settings/outbox/failed``: the failed outbox batches (id, events, attempts, when it
gave up, last error), ordered by id and paged by it (``?after=<batch id>``, as ``outbox failed
--after``), each with a "Replay" button that puts that one batch back in the queue with a fresh
retry ladder (``outbox replay BATCH_ID``). Both go through the same
:class:`~newsletter_connector.service.admin.AdminService` methods as the CLI.
"""

from __future__ import annotations

import falcon

from ...errors import InvalidRequest
from .act import ActCall
from .base import AdminPages
from .gate import Admin, signed_in
from .paths import OUTBOX_FAILED, OUTBOX_FAILED_REPLAY, SETTINGS

#: Batches per page.
PAGE_SIZE = 50
#: Longer than any batch id; a longer ``after`` or ``batch_id`` is refused before a query.
MAX_BATCH_ID_LENGTH = 100
CURRENT = "List source and outbox"


class FailedBatchesPage:
    """GET shows one page of failed batches with their Replay buttons."""

    def __init__(self, pages: AdminPages) -> None:
        self.pages = pages

    def show(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        admin: Admin,
        *,
        after: str | None = None,
        status: str = falcon.HTTP_200,
        error: str | None = None,
    ) -> None:
        """The page of failed batches after the id ``after``; with ``error`` (a 400) the
        newest page is shown with the message of a refused replay."""
        # One more than shown tells whether a next page exists.
        batches = self.pages.service.admin.failed_batches(after=after, limit=PAGE_SIZE + 1)
        more = len(batches) > PAGE_SIZE
        batches = batches[:PAGE_SIZE]
        self.pages.show(
            req,
            resp,
            admin,
            "outbox_failed.html",
            status=status,
            current=CURRENT,
            batches=batches,
            error=error,
            replay_url=self.pages.url(OUTBOX_FAILED_REPLAY),
            settings_url=self.pages.url(SETTINGS),
            first_url=self.pages.url(OUTBOX_FAILED) if after is not None else None,
            more_url=self.pages.url(f"{OUTBOX_FAILED}?after={batches[-1].id}") if more else None,
        )

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        admin = signed_in(req)
        after = req.get_param("after")
        if after is not None and not 0 < len(after) <= MAX_BATCH_ID_LENGTH:
            self.pages.bad_request(
                req,
                resp,
                admin,
                current=CURRENT,
                title="No such page of failed batches",
                message=f"after must be a batch id of 1-{MAX_BATCH_ID_LENGTH} characters.",
                back_to=OUTBOX_FAILED,
                back_text="First page of failed batches",
            )
            return
        self.show(req, resp, admin, after=after)


def replay_batch(call: ActCall) -> str:
    """Put the failed batch ``batch_id`` back in the queue; the target is its id.

    :raises InvalidRequest: naming ``batch_id``: blank or too long, missing, or not failed.
    """
    batch_id = call.form.get("batch_id").strip()
    if not 0 < len(batch_id) <= MAX_BATCH_ID_LENGTH:
        raise InvalidRequest(
            f"batch_id must be a batch id of 1-{MAX_BATCH_ID_LENGTH} characters",
            field="batch_id",
        )
    call.service.admin.replay_failed_batches(batch_id)
    return batch_id


def replay_refused(call: ActCall, error: InvalidRequest) -> None:
    """The newest page again (400) naming why the batch was not replayed."""
    FailedBatchesPage(call.pages).show(
        call.req, call.resp, call.admin, status=falcon.HTTP_400, error=error.message
    )
