"""``/admin``: the admin area's home, the dashboard. Subscribers by status, their signups,
unsubscribes and bounces per day over the last 30 or 90 days (``?days=30|90``; a chart and the
same figures as a table), the outbox's health, the platform connection and the latest issue,
all from one :meth:`~newsletter_connector.service.dashboard.DashboardService.overview` read;
below them, links to every other section.
"""

from __future__ import annotations

from datetime import date, timedelta
from functools import lru_cache
from urllib.parse import urlsplit

import falcon

from ...descriptors import OWNER
from ...errors import InvalidRequest
from ...i18n import Languages, language_words
from ...service.dashboard import DASHBOARD_RANGES, Dashboard
from ...settings import Settings
from ...storage.records import SubscriberDay
from ..charts import daily_lines
from ..params import decimal_integer, reject_unknown_params, single_param
from .base import AdminPages
from .gate import signed_in
from .paths import HOME
from .runner_words import runner_quiet


class DashboardPage:
    """GET shows the dashboard; a ``days`` other than 30 or 90 is a 400 page naming it."""

    def __init__(self, pages: AdminPages) -> None:
        self.pages = pages

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        admin = signed_in(req)
        try:
            board = self.pages.service.dashboard.overview(_days(req))
        except InvalidRequest as error:
            self.pages.bad_request(
                req,
                resp,
                admin,
                current="Dashboard",
                title="The dashboard cannot show that",
                message=error.message,
                back_to=HOME,
                back_text="Show the last 30 days",
            )
            return
        self.pages.show(
            req,
            resp,
            admin,
            "dashboard.html",
            current="Dashboard",
            board=board,
            ranges=[(n, f"{self.pages.url(HOME)}?days={n}") for n in DASHBOARD_RANGES],
            span=len(board.days),
            chart=_chart(board),
            today=board.now.date(),
            oldest_pending=_duration(board.oldest_pending_age),
            platform_host=urlsplit(board.connection.platform).netloc if board.connection else None,
            languages=_languages(self.pages.service.settings),
            runner_quiet=runner_quiet(self.pages.service.runner_status.seen())
            if admin.role == OWNER
            else None,
        )


def _languages(settings: Settings) -> dict[str, str]:
    """The readers' language in words ("Spanish (es)"), and the others a browser may pick
    when the site lets it ("" when it does not)."""
    languages = Languages.of(settings)
    others = [name for name in languages.installed if name != languages.language]
    return {
        "site": language_words(languages.language),
        "others": " or ".join(map(language_words, others)) if languages.from_browser else "",
    }


def _days(req: falcon.Request) -> int:
    """The ``days`` query parameter (default 30); the service checks it is 30 or 90."""
    reject_unknown_params(req, ("days",))
    raw = single_param(req, "days")
    if raw is None:
        return DASHBOARD_RANGES[0]
    value = decimal_integer(raw)
    if value is None:
        raise InvalidRequest("days must be 30 or 90", field="days")
    return value


def _chart(board: Dashboard) -> str:
    return _drawn_chart(tuple(board.days), board.now.date())


# Drawing is most of a view's work and the kept figures change once a minute (bench: admin_load).
@lru_cache(maxsize=8)
def _drawn_chart(days: tuple[SubscriberDay, ...], today: date) -> str:
    return daily_lines(
        title=f"Subscriber changes per day, last {len(days)} days",
        description=(
            f"Signups, unsubscribes and bounces on each day from {days[0].day:%B %d, %Y} to "
            f"{days[-1].day:%B %d, %Y}. In all: signups {sum(d.signups for d in days)}, "
            f"unsubscribes {sum(d.unsubscribes for d in days)}, "
            f"bounces {sum(d.bounces for d in days)}. The table below gives each day."
        ),
        days=[d.day for d in days],
        today=today,
        series={
            "Signups": [d.signups for d in days],
            "Unsubscribes": [d.unsubscribes for d in days],
            "Bounces": [d.bounces for d in days],
        },
    )


def _duration(age: timedelta | None) -> str | None:
    """``age`` in words at the precision a glance needs: "3 days 4 hours", "12 minutes"."""
    if age is None:
        return None
    seconds = max(int(age.total_seconds()), 0)
    days, rest = divmod(seconds, 86_400)
    hours, rest = divmod(rest, 3_600)
    minutes, seconds = divmod(rest, 60)
    parts = [(days, "day"), (hours, "hour"), (minutes, "minute"), (seconds, "second")]
    shown = [(n, unit) for n, unit in parts if n][:2] or [(0, "second")]
    return " ".join(f"{n} {unit}{'' if n == 1 else 's'}" for n, unit in shown)
