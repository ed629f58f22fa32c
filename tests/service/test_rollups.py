"""Daily rollups (docs/export.md, "Rollup fields"): computed in the database, cross-checked against
plain Python."""

from __future__ import annotations

import random
import uuid
from collections import Counter, defaultdict
from datetime import date, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import insert

from newsletter_connector.plugins.sql_store.tables import issues
from tests.support.analytics_helpers import client_for, clocked_service, connect

DAY0 = datetime(2028, 2, 26)  # the range crosses the leap day 2028-02-29
TYPES = ("pageview", "link click", "engagement ping")


@pytest.fixture
def clocked(newsletter_settings: Any, newsletter_storage: Any) -> Any:
    return clocked_service(newsletter_settings, newsletter_storage, DAY0)


def add_issue(storage: Any, created_at: datetime, kind: str = "daily") -> None:
    with storage.engine.begin() as connection:
        connection.execute(
            insert(issues).values(
                uuid=str(uuid.uuid4()),
                kind=kind,
                cadence="daily",
                issue_date=created_at.date().isoformat(),
                subject="s",
                site_url="https://news.example.test",
                sections=[],
                html="<p>x</p>",
                created_at=created_at,
                updated_at=created_at,
            )
        )


def expected_rollups(
    events: list[dict[str, Any]],
    calls: list[dict[str, Any]],
    issue_times: list[datetime],
    first: date,
    last: date,
    source: str,
) -> list[dict[str, Any]]:
    """The same rollups computed naively in Python from the raw rows."""
    first_seen: dict[str, datetime] = {}
    for event in events:
        first_seen.setdefault(event["visitor_id"], event["occurred_at"])
    result = []
    day = first
    while day <= last:
        todays = [e for e in events if e["occurred_at"].date() == day]
        views = Counter(e["path"] for e in todays if e["event_type"] == "pageview")
        pings = [e["engaged_seconds"] for e in todays if e["event_type"] == "engagement ping"]
        by_model: dict[str, dict[str, Any]] = defaultdict(
            lambda: {"calls": 0, "failures": 0, "prompt_tokens": 0, "completion_tokens": 0}
        )
        for call in (c for c in calls if c["occurred_at"].date() == day):
            entry = by_model[call["model"]]
            entry["calls"] += 1
            entry["failures"] += 0 if call["ok"] else 1
            entry["prompt_tokens"] += call["prompt_tokens"]
            entry["completion_tokens"] += call["completion_tokens"]
        result.append(
            {
                "date": day.isoformat(),
                "source": source,
                "pageviews": sum(views.values()),
                "unique_visitors": len({e["visitor_id"] for e in todays}),
                "new_visitors": sum(1 for t in first_seen.values() if t.date() == day),
                "sessions": len({e["session_id"] for e in todays}),
                "issue_number": sum(1 for t in issue_times if t.date() == day),
                "top_pages": [
                    {"path": p, "views": v}
                    for p, v in sorted(views.items(), key=lambda pv: (-pv[1], pv[0]))[:10]
                ],
                "link_clicks": sum(1 for e in todays if e["event_type"] == "link click"),
                "avg_engagement_seconds": round(sum(pings) / len(pings), 2) if pings else None,
                "llm_usage": {
                    "calls": sum(m["calls"] for m in by_model.values()),
                    "failures": sum(m["failures"] for m in by_model.values()),
                    "by_model": [{"model": name, **by_model[name]} for name in sorted(by_model)],
                },
                "ga4": None,
            }
        )
        day += timedelta(days=1)
    return result


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_rollups_match_a_plain_python_computation(clocked: Any, seed: int) -> None:
    service, _ = clocked
    rng = random.Random(seed)
    paths = [f"/story/{n}" for n in range(25)] + ["/", "/About", "/about", "/ü"]
    events = []
    for _ in range(1500):
        kind = rng.choice(TYPES)
        events.append(
            {
                "occurred_at": DAY0 + timedelta(seconds=rng.randrange(0, 8 * 86400)),
                "event_type": kind,
                "visitor_id": f"visitor-{rng.randrange(60)}",
                "session_id": f"session-{rng.randrange(150)}",
                "path": rng.choice(paths[: rng.choice((3, 30))]),
                "referrer": "",
                "props": None,
                "engaged_seconds": round(rng.uniform(0, 300), 3)
                if kind == "engagement ping"
                else None,
            }
        )
    # Midnight edges belong to the day that starts there.
    events.append({**events[0], "occurred_at": DAY0 + timedelta(days=2), "event_type": "pageview"})
    events.append(
        {
            **events[0],
            "occurred_at": DAY0 + timedelta(days=2, microseconds=-1),
            "event_type": "pageview",
        }
    )
    events.sort(key=lambda e: e["occurred_at"])
    calls = [
        {
            "occurred_at": DAY0 + timedelta(seconds=rng.randrange(0, 8 * 86400)),
            "model": rng.choice(("gpt-b", "Gpt-a", "claude")),
            "ok": rng.random() > 0.2,
            "prompt_tokens": rng.randrange(0, 5000),
            "completion_tokens": rng.randrange(0, 900),
        }
        for _ in range(80)
    ]
    issue_times = [DAY0 + timedelta(days=d, hours=6) for d in (0, 1, 1, 4)]
    with service.storage.transaction() as uow:
        for event in events:
            uow.analytics.add_event(**event)
        for call in calls:
            uow.llm_usage.add(**call)
    for t in issue_times:
        add_issue(service.storage, t)
    add_issue(service.storage, DAY0 + timedelta(days=2), kind="test")  # not counted

    first, last = date(2028, 2, 25), date(2028, 3, 5)  # one quiet day at each end
    got = service.analytics.rollups(first, last)
    want = expected_rollups(events, calls, issue_times, first, last, "news.example.test")
    for got_day, want_day in zip(got, want, strict=True):
        assert got_day == want_day, got_day["date"]
    assert len(got) == len(want) == 10
    # A sub-range gives the same days (nothing depends on the requested span).
    assert service.analytics.rollups(date(2028, 2, 29), date(2028, 2, 29)) == [want[4]]


def test_quiet_day_gives_zeros(clocked: Any) -> None:
    service, _ = clocked
    (rollup,) = service.analytics.rollups(date(2028, 1, 1), date(2028, 1, 1))
    assert rollup == {
        "date": "2028-01-01",
        "source": "news.example.test",
        "pageviews": 0,
        "unique_visitors": 0,
        "new_visitors": 0,
        "sessions": 0,
        "issue_number": 0,
        "top_pages": [],
        "link_clicks": 0,
        "avg_engagement_seconds": None,
        "llm_usage": {"calls": 0, "failures": 0, "by_model": []},
        "ga4": None,
    }


def test_top_pages_keep_ten_ordered_by_views_then_path(clocked: Any) -> None:
    service, _ = clocked
    common = {"visitor_id": "visitor-1", "session_id": "session-1"}
    for n in range(12):
        for _ in range(12 - n if n != 11 else 2):
            service.analytics.record_event("pageview", path=f"/p{n:02d}", **common)
    (rollup,) = service.analytics.rollups(DAY0.date(), DAY0.date())
    pages = rollup["top_pages"]
    assert len(pages) == 10
    views = [(p["views"], p["path"]) for p in pages]
    assert views == sorted(views, key=lambda vp: (-vp[0], vp[1]))
    assert pages[0] == {"path": "/p00", "views": 12}
    # /p10 and /p11 (2 views each) fall off; the last kept is /p09 with 3.
    assert pages[-1] == {"path": "/p09", "views": 3}
    assert rollup["pageviews"] == 79  # every page's views, not only the ten pages kept


def test_engagement_average_and_link_clicks(clocked: Any) -> None:
    service, _ = clocked
    common = {"visitor_id": "visitor-1", "session_id": "session-1", "path": "/a"}
    service.analytics.record_event("pageview", **common)
    (rollup,) = service.analytics.rollups(DAY0.date(), DAY0.date())
    assert rollup["avg_engagement_seconds"] is None  # no engagement events that day
    service.analytics.record_event("engagement ping", seconds=10, **common)
    service.analytics.record_event("engagement ping", seconds=0, **common)
    service.analytics.record_event("engagement ping", seconds=5, **common)
    service.analytics.record_event("link click", href="https://example.org/", **common)
    (rollup,) = service.analytics.rollups(DAY0.date(), DAY0.date())
    assert rollup["avg_engagement_seconds"] == 5.0
    assert rollup["link_clicks"] == 1
    assert rollup["pageviews"] == 1


def test_new_visitors_count_first_sightings_only(clocked: Any) -> None:
    service, clock = clocked
    common = {"session_id": "session-1", "path": "/"}
    service.analytics.record_event("pageview", visitor_id="visitor-old", **common)
    clock.now = DAY0 + timedelta(days=1)
    service.analytics.record_event("pageview", visitor_id="visitor-old", **common)
    service.analytics.record_event("pageview", visitor_id="visitor-new", **common)
    day0, day1 = service.analytics.rollups(DAY0.date(), DAY0.date() + timedelta(days=1))
    assert (day0["new_visitors"], day0["unique_visitors"]) == (1, 1)
    assert (day1["new_visitors"], day1["unique_visitors"]) == (1, 2)


def test_llm_usage_by_model(clocked: Any) -> None:
    service, _ = clocked
    service.analytics.record_llm_usage("model-b", True, 100, 20)
    service.analytics.record_llm_usage("model-a", False, 50, 0)
    service.analytics.record_llm_usage("model-b", False, 7, 1)
    (rollup,) = service.analytics.rollups(DAY0.date(), DAY0.date())
    assert rollup["llm_usage"] == {
        "calls": 3,
        "failures": 2,
        "by_model": [
            {
                "model": "model-a",
                "calls": 1,
                "failures": 1,
                "prompt_tokens": 50,
                "completion_tokens": 0,
            },
            {
                "model": "model-b",
                "calls": 2,
                "failures": 1,
                "prompt_tokens": 107,
                "completion_tokens": 21,
            },
        ],
    }


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("", True, 1, 1), "model"),
        (("m" * 201, True, 1, 1), "model"),
        (("m", "yes", 1, 1), "ok"),
        (("m", True, -1, 1), "prompt_tokens"),
        (("m", True, 1, 1.5), "completion_tokens"),
        (("m", True, 2**31, 1), "prompt_tokens"),
    ],
)
def test_llm_usage_validation(clocked: Any, args: tuple[Any, ...], field: str) -> None:
    from newsletter_connector.errors import InvalidRequest

    service, _ = clocked
    with pytest.raises(InvalidRequest) as info:
        service.analytics.record_llm_usage(*args)
    assert info.value.field == field
    (rollup,) = service.analytics.rollups(DAY0.date(), DAY0.date())
    assert rollup["llm_usage"]["calls"] == 0


def test_rollups_endpoint_serves_the_service_result(clocked: Any) -> None:
    service, _ = clocked
    auth = connect(service)
    service.analytics.record_event(
        "pageview", visitor_id="visitor-1", session_id="session-1", path="/x"
    )
    client = client_for(service)
    result = client.simulate_get(
        "/api/export/rollups", headers=auth, query_string="from=2028-02-25&to=2028-02-27"
    )
    assert result.status_code == 200
    assert result.json == {
        "rollups": service.analytics.rollups(date(2028, 2, 25), date(2028, 2, 27))
    }
    assert [r["pageviews"] for r in result.json["rollups"]] == [0, 1, 0]


def test_llm_calls_recorded_in_bulk_all_or_nothing(clocked: Any) -> None:
    from newsletter_connector.errors import InvalidRequest

    service, _ = clocked
    good = {"model": "m", "ok": True, "prompt_tokens": 3}
    for bad, field in (
        ({"model": "m"}, "llm_calls[1].ok"),
        ({"model": " ", "ok": True}, "llm_calls[1].model"),
        ({"model": "m", "ok": True, "cost": 1}, "llm_calls[1].cost"),
        ({"model": "m", "ok": False, "completion_tokens": -2}, "llm_calls[1].completion_tokens"),
        ("not a mapping", "llm_calls[1]"),
    ):
        with pytest.raises(InvalidRequest) as info:
            service.analytics.record_llm_calls([good, bad])
        assert info.value.field == field
    (rollup,) = service.analytics.rollups(DAY0.date(), DAY0.date())
    assert rollup["llm_usage"]["calls"] == 0
    assert service.analytics.record_llm_calls([]) == 0
    assert service.analytics.record_llm_calls([good, {"model": "m", "ok": False}]) == 2
    (rollup,) = service.analytics.rollups(DAY0.date(), DAY0.date())
    assert rollup["llm_usage"]["by_model"] == [
        {"model": "m", "calls": 2, "failures": 1, "prompt_tokens": 3, "completion_tokens": 0}
    ]
