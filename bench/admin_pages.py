"""Benchmark: the admin dashboard and analytics pages over 1,000,000 subscribers and
1,000,000 analytics events, as a signed-in admin's browser gets them.

    python -m bench.admin_pages [--count 1000000] [--events 1000000] [--repeat 5]
                                [--database-url URL]

Runs on SQLite, or on PostgreSQL given ``--database-url`` (or NEWSLETTER_TEST_DATABASE_URL; a
database is created and dropped). Loads the subscribers (joined over the last year, as in
``bench.dashboard``) and the events (spread over the last 92 days), creates an admin user
through the service, signs in through the login form, then times GET of ``/admin?days=30``,
``/admin?days=90`` and ``/analytics`` over 92 days through falcon's TestClient (median of
``--repeat`` runs each; the page's whole work: session check, reads, charts and template)
against a baseline measured in the same run: GET of the API keys page, a signed-in page
whose read is tiny. The analytics page's first view, which computes and keeps the 91 settled
days (``service.analytics.kept_rollups``), is timed and reported apart; the timed views read
them and compute only today.
"""

from __future__ import annotations

import argparse
import os
import re
import time
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

import falcon.testing

from bench.bulk_load import bulk_load as load_events
from bench.bulk_load import synthetic_events
from bench.dashboard import COLUMNS, NOW, _median_seconds, joined_over_a_year
from bench.harness import database, report
from bench.subscriber_walk import bulk_load as load_subscribers
from newsletter_connector import NewsletterService, Settings, create_app
from newsletter_connector.plugins.sql_store import BuiltinSqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.web.admin.gate import COOKIE_NAME
from newsletter_connector.web.pages.csrf import COOKIE_NAME as LOGIN_CSRF_COOKIE

PASSWORD = "bench admin password"
DAYS = 92
TARGET = "< 0.3 s over 1,000,000 subscribers and 1,000,000 events (baseline: the API keys page)"
_TOKEN = re.compile(r'name="csrf_token" value="([^"]*)"')


def sign_in(client: falcon.testing.TestClient, username: str) -> str:
    """The session cookie of ``username`` signed in through the login form."""
    form = client.simulate_get("/admin/login")
    token = _TOKEN.search(form.text)
    if token is None:
        raise SystemExit(f"no login form: {form.status}")
    result = client.simulate_post(
        "/admin/login",
        body=urlencode({"username": username, "password": PASSWORD, "csrf_token": token[1]}),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
        cookies={LOGIN_CSRF_COOKIE: form.cookies[LOGIN_CSRF_COOKIE].value},
    )
    if result.status_code != 303:
        raise SystemExit(f"sign-in failed: {result.status}")
    return str(result.cookies[COOKIE_NAME].value)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1_000_000, help="subscribers to load")
    parser.add_argument("--events", type=int, default=1_000_000, help="analytics events to load")
    parser.add_argument("--repeat", type=int, default=5, help="timed requests of each page")
    parser.add_argument(
        "--database-url",
        default=os.environ.get("NEWSLETTER_TEST_DATABASE_URL") or None,
        help="PostgreSQL server URL (default: SQLite; or NEWSLETTER_TEST_DATABASE_URL)",
    )
    args = parser.parse_args(argv)
    backend = "postgresql" if args.database_url else "sqlite"
    first_day = NOW.date() - timedelta(days=DAYS - 1)
    with database(args.database_url) as url:
        storage = BuiltinSqlStorage(make_engine(url))
        settings = Settings(
            database_url=url,
            base_url="https://news.example/newsletter",
            site_name="Bench News",
            site_secret="bench-site-secret-not-for-production",
        )
        service = NewsletterService.build(settings, storage=storage, clock=lambda: NOW)
        began = time.perf_counter()
        load_subscribers(storage, args.count, rows=joined_over_a_year, columns=COLUMNS)
        start = NOW.replace(hour=0, minute=0) - timedelta(days=DAYS - 1)
        loaded = load_events(storage.engine, synthetic_events(args.events, start, DAYS))
        print(
            f"loaded {args.count} subscribers and {loaded} events in "
            f"{time.perf_counter() - began:.2f} s ({storage.dialect})"
        )
        service.admin_access.create_user("bench", PASSWORD)
        client = falcon.testing.TestClient(create_app(service=service))
        cookies = {COOKIE_NAME: sign_in(client, "bench")}

        def get(path: str, query: str = "") -> Any:
            result = client.simulate_get(path, query_string=query, cookies=cookies)
            if result.status_code != 200:
                raise SystemExit(f"GET {path}?{query}: {result.status}")
            return result

        baseline = _median_seconds(lambda: get("/admin/settings/api-keys"), args.repeat)
        analytics_query = f"from={first_day.isoformat()}&to={NOW.date().isoformat()}"
        pages = {
            "admin_dashboard30": ("/admin", "days=30"),
            "admin_dashboard90": ("/admin", "days=90"),
            f"admin_analytics{DAYS}": ("/admin/analytics", analytics_query),
        }
        began = time.perf_counter()
        shown = get(*pages[f"admin_analytics{DAYS}"]).text
        first_view = time.perf_counter() - began
        if loaded and "No pageviews in this range." in shown:
            raise SystemExit("the analytics page shows no traffic")
        print(
            f"first view of the analytics page (keeps {DAYS - 1} settled days): "
            f"{first_view * 1000:.1f} ms"
        )
        report(
            f"admin_analytics{DAYS}_first_view[{backend}]",
            first_view,
            "s",
            target="once per settled day: computes and keeps the days not yet kept",
        )
        for name, (path, query) in pages.items():
            elapsed = _median_seconds(lambda path=path, query=query: get(path, query), args.repeat)
            print(
                f"GET {path}?{query}: {elapsed * 1000:.1f} ms; "
                f"API keys page {baseline * 1000:.1f} ms"
            )
            report(f"{name}[{backend}]", elapsed, "s", baseline=baseline, target=TARGET)
        storage.close()


if __name__ == "__main__":
    main()
