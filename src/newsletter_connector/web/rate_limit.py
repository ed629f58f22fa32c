"""Per-client limits on the public POST endpoints (signup, contact, profile, analytics).

``settings.rate_limit_<form>`` requests per minute per client address, 0 for none, in fixed
windows counted in the database. A client address is only ever stored as its keyed hash.
"""

from __future__ import annotations

from typing import Literal

import falcon
from limits import RateLimitItemPerMinute
from limits.strategies import FixedWindowRateLimiter

from ..service.context import ServiceContext
from .client_address import client_address
from .rate_limit_storage import DatabaseCounters, seconds_until

LimitedForm = Literal["signup", "contact", "profile", "analytics"]
#: Purpose of the keyed hash of a client address (see ``ServiceContext.keyed_hash``).
CLIENT_KEY_PURPOSE = "rate-limit-client"


class PublicRateLimits:
    """The limits of one app's public endpoints."""

    def __init__(self, context: ServiceContext) -> None:
        self.context = context
        settings = context.settings
        per_minute = {
            "signup": settings.rate_limit_signup,
            "contact": settings.rate_limit_contact,
            "profile": settings.rate_limit_profile,
            "analytics": settings.rate_limit_analytics,
        }
        self.items = {
            form: RateLimitItemPerMinute(amount, namespace=f"nc-{form}")
            for form, amount in per_minute.items()
            if amount > 0
        }
        self.limiter = FixedWindowRateLimiter(DatabaseCounters(context))

    def retry_after(self, req: falcon.Request, form: LimitedForm) -> int | None:
        """Count this request against ``form``'s limit for its client: ``None`` when it is
        within the limit (or there is none), else the seconds until the client may retry."""
        item = self.items.get(form)
        if item is None:
            return None
        address = client_address(req, self.context.settings.trusted_proxies)
        client = self.context.keyed_hash(CLIENT_KEY_PURPOSE, address)
        if self.limiter.hit(item, client):
            return None
        reset = self.limiter.get_window_stats(item, client).reset_time
        return seconds_until(reset, self.context.clock())
