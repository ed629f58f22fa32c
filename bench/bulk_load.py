"""Fast bulk loading of synthetic analytics events for the benchmarks (not for production).

SQLite: one ``executemany`` per chunk on the raw driver connection; PostgreSQL: ``COPY``.
Times are written in the SQL store's own storage format (naive UTC).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Engine

COLUMNS = (
    "occurred_at", "event_type", "visitor_id", "session_id", "path", "referrer", "props",
    "engaged_seconds", "day",
)  # fmt: skip
CHUNK = 50_000


def synthetic_events(
    size: int, start: datetime, days: int, seed: int = 7
) -> Iterator[tuple[Any, ...]]:
    """``size`` events spread evenly over ``days`` days from ``start``, in time order."""
    rng = random.Random(seed)
    step = days * 86_400 / max(size, 1)
    paths = [f"/story/{n}" for n in range(2_000)]
    for n in range(size):
        at = start + timedelta(seconds=n * step)
        visitor = rng.randrange(max(size // 20, 1))
        kind = rng.choices(("pageview", "link click", "engagement ping"), (70, 15, 15))[0]
        props: str | None = None
        seconds: float | None = None
        if kind == "link click":
            props = json.dumps({"href": "https://elsewhere.example/a"})
        elif kind == "engagement ping":
            seconds = round(rng.uniform(1, 600), 3)
            props = json.dumps({"engaged_seconds": seconds})
        yield (
            at, kind, f"visitor-{visitor:08d}", f"session-{visitor:08d}-{n // 5000}",
            paths[min(int(rng.paretovariate(1.2)) - 1, len(paths) - 1)],
            "https://search.example/", props, seconds, at.date(),
        )  # fmt: skip


def bulk_load(engine: Engine, rows: Iterator[tuple[Any, ...]]) -> int:
    """Insert ``rows`` (tuples in ``COLUMNS`` order) and every visitor's first sighting."""
    count = 0
    raw = engine.raw_connection()
    try:
        cursor = raw.cursor()
        if engine.dialect.name == "postgresql":
            # A million-row COPY outlasts the request-sized statement bound on a busy machine.
            cursor.execute("SET LOCAL statement_timeout = 0")
            columns = ", ".join(COLUMNS)
            with cursor.copy(f"COPY nc_analytics_events ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
                    count += 1
        else:
            cursor.execute("BEGIN")
            sql = f"INSERT INTO nc_analytics_events ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"  # noqa: E501
            chunk: list[tuple[Any, ...]] = []
            for row in rows:
                chunk.append(
                    (row[0].isoformat(sep=" ", timespec="microseconds"), *row[1:-1], str(row[-1]))
                )
                if len(chunk) == CHUNK:
                    cursor.executemany(sql, chunk)
                    count += len(chunk)
                    chunk.clear()
            cursor.executemany(sql, chunk)
            count += len(chunk)
            cursor.execute("COMMIT")
        raw.commit()
    finally:
        raw.close()
    with engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO nc_analytics_visitors (visitor_id, first_seen_at) "
                "SELECT visitor_id, MIN(occurred_at) FROM nc_analytics_events GROUP BY visitor_id"
            )
        )
    # What autovacuum does to an insert-only table on PostgreSQL (statistics, visibility map
    # for index-only scans); ANALYZE on SQLite.
    vacuum = "VACUUM ANALYZE" if engine.dialect.name == "postgresql" else "ANALYZE"
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.execute(text(vacuum))
    return count
