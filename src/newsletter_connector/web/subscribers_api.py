"""Newsletter API v1 resources for subscribers and the contact-message log (docs/newsletter-api.md):
each parses the request, calls one service method and serialises its result; no rule lives here."""

from __future__ import annotations

from urllib.parse import quote

import falcon

from ..model.contact import STATUSES
from ..model.requests import PatchRequest, SignupRequest, parse_request
from ..service import NewsletterService
from ..service.cursors import DEFAULT_LIMIT, MAX_LIMIT
from .auth import require_api_key
from .bodies import json_object
from .params import enum_param, int_param, single_param


def _limit(req: falcon.Request) -> int:
    return int_param(req, "limit", default=DEFAULT_LIMIT, minimum=1, maximum=MAX_LIMIT)


@falcon.before(require_api_key)
class SubscribersResource:
    """``GET /subscribers`` (cursor walk) and ``POST /subscribers`` (signup)."""

    def __init__(self, service: NewsletterService, prefix: str) -> None:
        self.service = service
        self.prefix = prefix

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        status = enum_param(req, "status", STATUSES)
        cursor = single_param(req, "cursor")
        page = self.service.subscribers.list_page(status, cursor, _limit(req))
        contact = self.service.subscribers.contact
        resp.media = {
            "data": [contact(record) for record in page.items],
            "next_cursor": page.next_cursor,
        }

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        result = self.service.subscribers.subscribe(parse_request(SignupRequest, json_object(req)))
        resp.status = falcon.HTTP_201 if result.created else falcon.HTTP_200
        resp.location = f"{req.root_path}{self.prefix}/subscribers/{quote(result.record.email)}"
        resp.media = self.service.subscribers.contact(result.record)


@falcon.before(require_api_key)
class SubscriberResource:
    """``GET``, ``PATCH`` and ``DELETE /subscribers/{email}`` (percent-encoded, any case)."""

    def __init__(self, service: NewsletterService) -> None:
        self.service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response, email: str) -> None:
        resp.media = self.service.subscribers.contact(self.service.subscribers.get(email))

    def on_patch(self, req: falcon.Request, resp: falcon.Response, email: str) -> None:
        record = self.service.subscribers.update(
            email, parse_request(PatchRequest, json_object(req))
        )
        resp.media = self.service.subscribers.contact(record)

    def on_delete(self, req: falcon.Request, resp: falcon.Response, email: str) -> None:
        result = self.service.subscribers.erase(email)
        resp.media = {
            "deleted": True,
            "email": result.email,
            "previous_status": result.previous_status,
        }


@falcon.before(require_api_key)
class ContactMessagesResource:
    """``GET /contact-messages``: the lossless log in arrival order, cursor-paginated."""

    def __init__(self, service: NewsletterService) -> None:
        self.service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        cursor = single_param(req, "cursor")
        page = self.service.messages.list_page(cursor, _limit(req))
        resp.media = {
            "data": [self.service.messages.payload(record) for record in page.items],
            "next_cursor": page.next_cursor,
        }


def add_routes(
    app: falcon.App[falcon.Request, falcon.Response], service: NewsletterService, prefix: str
) -> None:
    app.add_route(f"{prefix}/subscribers", SubscribersResource(service, prefix))
    app.add_route(f"{prefix}/subscribers/{{email:path}}", SubscriberResource(service))
    app.add_route(f"{prefix}/contact-messages", ContactMessagesResource(service))
