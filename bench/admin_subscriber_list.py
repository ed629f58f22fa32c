"""Benchmark: the admin's subscriber list over 1,000,000 subscribers, each single filter and
the common pairs, as a signed-in editor's browser gets the page.

    python -m bench.admin_subscriber_list [--count 1000000] [--repeat 5] [--database-url URL]

Loads subscribers whose fields vary as a real list's do (5% bounced, a ZIP code each spread
over 100,000, a tenth agreeing to text messages, one to three topics, an age range, names from
a short list, one signup a minute), signs in through the login form and times GET of
``/admin/subscribers`` with each filter through falcon's TestClient: the page's whole work
(session check, the count, the page's walk, the template), median of ``--repeat`` runs, for
the first page and for the page its "next" or "search further" link opens. Baseline, in the
same run: the API keys page, a signed-in page whose read is tiny.

Target: under 300 ms for every filter on both databases, however rare its matches: a page
examines at most ``subscriber_list.BUDGET`` subscribers and so does its count.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import falcon.testing

from bench.admin_pages import PASSWORD, sign_in
from bench.dashboard import _median_seconds
from bench.harness import database, report
from bench.subscriber_walk import bulk_load
from newsletter_connector import NewsletterService, Settings, create_app
from newsletter_connector.plugins.sql_store import BuiltinSqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.web.admin.gate import COOKIE_NAME

COLUMNS = (
    "email", "first_name", "last_name", "zip", "sms_enabled", "pref_briefings", "pref_puzzles",
    "pref_on_this_day", "pref_local", "status", "age_range", "categories", "created_at",
    "updated_at", "confirm_token", "unsubscribe_token", "profile_token",
)  # fmt: skip
START = datetime(2024, 1, 1)
FIRST_NAMES = ("Mary", "Robert", "Linda", "James", "Patricia", "John", "Barbara", "Élodie")
LAST_NAMES = ("Smith", "Johnson", "Martinez", "Brown", "Nguyen", "Garcia", "Miller", "Davis")
TOPICS = ("health", "benefits", "money", "housing", "caregiving", "technology", "travel", "food")
AGES = ("under_55", "55_64", "65_74", "75_84", "85_plus", None)
CADENCES = ("daily", "weekly", "off")
STATUS_MIX = ("pending", "unsubscribed", *["confirmed"] * 8)
#: name -> query string; the filters alone, then the pairs an editor reaches for.
CASES = {
    "everyone": "",
    "status": "status=bounced",
    "category": "category=caregiving",
    "cadence": "puzzles=weekly",
    "sms": "sms=yes",
    "zip3": "zip=021",
    "zip5": "zip=02134",
    "age": "age=85_plus",
    "signup_month": "from=2024-06-01&to=2024-06-30",
    "address": "address=reader05&sort=address",
    "name": "name=mart",
    "bounced_zip": "status=bounced&zip=021",
    "confirmed_topic": "status=confirmed&category=health",
    "sms_age": "sms=yes&age=75_84",
    "bounced_month": "status=bounced&from=2024-06-01&to=2024-06-30",
    "bounced_by_address": "status=bounced&sort=address",
}
TARGET = "< 300 ms a page, any filter (baseline: the API keys page)"
_LATER = re.compile(r'<a href="([^"]*)" rel="next">')


def _mix(i: int, salt: int, modulus: int) -> int:
    """A spread-out, repeatable choice for row ``i``, independent across salts (splitmix64)."""
    z = (i * 0x9E3779B97F4A7C15 + salt * 0xBF58476D1CE4E5B9) % 2**64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % 2**64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % 2**64
    return (z ^ (z >> 31)) % modulus


def varied_rows(count: int) -> Iterator[tuple[Any, ...]]:
    for i in range(count):
        created = START + timedelta(minutes=i)
        status = "bounced" if _mix(i, 1, 20) == 0 else STATUS_MIX[_mix(i, 2, len(STATUS_MIX))]
        topics = sorted({TOPICS[_mix(i, 3, 8)], TOPICS[_mix(i, 4, 8)], TOPICS[_mix(i, 5, 8)]})
        yield (
            f"reader{i:07d}@example.org", FIRST_NAMES[_mix(i, 6, 8)], LAST_NAMES[_mix(i, 7, 8)],
            f"{_mix(i, 8, 100000):05d}", _mix(i, 9, 10) == 0, CADENCES[_mix(i, 10, 3)],
            CADENCES[_mix(i, 11, 3)], "daily", CADENCES[_mix(i, 12, 3)], status,
            AGES[_mix(i, 13, 6)], json.dumps(topics[: 1 + _mix(i, 14, 3)]), created, created,
            f"c{i:031d}", f"u{i:031d}", f"p{i:031d}",
        )  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--database-url", help="PostgreSQL server URL (default: SQLite)")
    args = parser.parse_args(argv)
    backend = "postgresql" if args.database_url else "sqlite"
    with database(args.database_url) as url:
        storage = BuiltinSqlStorage(make_engine(url))
        began = time.perf_counter()
        bulk_load(storage, args.count, rows=varied_rows, columns=COLUMNS)
        print(f"loaded {args.count} subscribers in {time.perf_counter() - began:.1f} s ({backend})")
        settings = Settings(
            database_url=url, base_url="https://bench.example", site_secret="bench-site-secret"
        )
        service = NewsletterService.build(settings, storage=storage)
        service.admin_access.create_user("bench", PASSWORD)
        client = falcon.testing.TestClient(create_app(service=service))
        cookies = {COOKIE_NAME: sign_in(client, "bench")}

        def get(path: str, query: str) -> Any:
            result = client.simulate_get(path, query_string=query, cookies=cookies)
            if result.status_code != 200:
                raise SystemExit(f"GET {path}?{query}: {result.status}")
            return result

        baseline = _median_seconds(lambda: get("/admin/settings/api-keys", ""), args.repeat)
        worst = 0.0
        for name, query in CASES.items():
            first = get("/admin/subscribers", query)
            shown = len(re.findall(r"<tr>\s*<td><a ", first.text))
            count = re.search(r'<p class="count">(.*?)</p>', first.text, re.S)
            seconds = _median_seconds(lambda q=query: get("/admin/subscribers", q), args.repeat)
            later = _LATER.search(first.text)
            then = 0.0
            if later:
                path, _, rest = (
                    html.unescape(later[1]).removeprefix("https://bench.example").partition("?")
                )
                then = _median_seconds(lambda p=path, r=rest: get(p, r), args.repeat)
            worst = max(worst, seconds, then)
            words = html.unescape(count[1]).strip() if count else "?"
            print(
                f"{name:>20}: first page {seconds * 1000:6.1f} ms ({shown} rows; {words}); "
                f"its next {then * 1000:6.1f} ms"
            )
            report(
                f"admin_list_{name}[{backend}]",
                seconds * 1000,
                "ms",
                baseline=baseline * 1000,
                target=TARGET,
            )
        report(
            f"admin_list_worst[{backend}]",
            worst * 1000,
            "ms",
            baseline=baseline * 1000,
            target=TARGET,
        )
        storage.close()


if __name__ == "__main__":
    main()
