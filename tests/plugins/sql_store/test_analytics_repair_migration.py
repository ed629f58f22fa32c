"""Migration 0006 repairs analytics rows stored before capture refused what no JSON encoder
takes: afterwards each row holds what the export serves for it."""

from __future__ import annotations

import math
from datetime import datetime
from pathlib import Path

import orjson
import pytest
from alembic.script import ScriptDirectory
from sqlalchemy import select, text

from newsletter_connector.model.wire_safe import wire_props
from newsletter_connector.plugins.sql_store import SqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.plugins.sql_store.migrate import MIGRATIONS_DIR, upgrade
from newsletter_connector.plugins.sql_store.tables import analytics_events
from tests.model.test_export_stored_rows import SQLITE_ONLY_PROPS, STORED_PROPS
from tests.plugins.sql_store.test_rollup_day_migration import empty_database
from tests.support.analytics_helpers import insert_raw_events

pytestmark = pytest.mark.system  # migrates databases down and up

AT = datetime(2026, 3, 1, 12, 0, 0)
#: The revision 0006 follows, wherever the chain puts it.
BEFORE = str(ScriptDirectory(str(MIGRATIONS_DIR)).get_revision("0006").down_revision)


def test_0006_stores_what_the_export_serves(tmp_path: Path) -> None:
    with empty_database(tmp_path) as url:
        engine = make_engine(url)
        upgrade(engine, BEFORE)
        postgres = engine.dialect.name == "postgresql"
        cases = dict(STORED_PROPS) if postgres else {**STORED_PROPS, **SQLITE_ONLY_PROPS}
        # More rows than one batch of the migration, so its paging is exercised too.
        stored = [props for props, _ in cases.values()] * 300 + ['{"fine":1}', None]
        served = [s for _, s in cases.values()] * 300 + [{"fine": 1}, None]
        props_sql = "CAST(:props AS JSON)" if postgres else ":props"
        bad_seconds = "CAST('NaN' AS DOUBLE PRECISION)" if postgres else "9e999"
        with engine.begin() as connection:
            connection.execute(
                text(
                    "INSERT INTO nc_analytics_events (occurred_at, day, event_type, visitor_id, "
                    f"session_id, path, referrer, props) VALUES (:at, :day, 'pageview', 'v', "
                    f"'s', '/', '', {props_sql})"
                ),
                [{"at": AT, "day": AT.date(), "props": props} for props in stored],
            )
            connection.execute(
                text(
                    "INSERT INTO nc_analytics_events (occurred_at, day, event_type, visitor_id, "
                    "session_id, path, referrer, engaged_seconds) VALUES (:at, :day, "
                    f"'engagement ping', 'v', 's', '/', '', {bad_seconds}), (:at, :day, "
                    "'engagement ping', 'v', 's', '/', '', 2.5)"
                ),
                {"at": AT, "day": AT.date()},
            )
        storage = SqlStorage(engine)
        with storage.transaction(write=False) as uow:
            before = [e.props for e in uow.analytics.events_after(0, 10_000)]

        upgrade(engine)

        e = analytics_events.c
        with engine.connect() as connection:
            # Read through the plain JSON column type: no lenient reading needed any more.
            after = connection.execute(select(e.props).order_by(e.id)).scalars().all()
            texts = (
                connection.execute(
                    select(text("CAST(props AS TEXT)")).select_from(analytics_events).order_by(e.id)
                )
                .scalars()
                .all()
            )
            seconds = (
                connection.execute(
                    select(e.engaged_seconds)
                    .where(e.event_type == "engagement ping")
                    .order_by(e.id)
                )
                .scalars()
                .all()
            )
        with storage.transaction(write=False) as uow:
            exported = [e.props for e in uow.analytics.events_after(0, 10_000)]
        engine.dispose()

    assert after[: len(served)] == served
    assert len(after) == len(served) + 2
    for stored_text in texts:
        if stored_text is not None:  # orjson refuses lone surrogates, NaN and deep nesting
            orjson.loads(stored_text)
    assert seconds == [None, 2.5]
    # The export reads the same props before and after (once made encodable).
    assert [wire_props(p) for p in before] == [wire_props(p) for p in exported]
    assert all(p is None or all(not isinstance(v, float) or math.isfinite(v) for v in p.values())
               for p in exported)  # fmt: skip


def test_0006_redacts_action_link_tokens_stored_before_capture_did(tmp_path: Path) -> None:
    token = "kq2Xz7aF9dLm0pQrStUvWxYz"
    with empty_database(tmp_path) as url:
        engine = make_engine(url)
        upgrade(engine, BEFORE)
        rows: list[tuple[str, str, str | None]] = [
            (f"/newsletter/unsubscribe/{token}", f"https://other.example/x/profile/{token}", None),
            ("/a", "", f'{{"href": "https://news.example/n/confirm/{token}", "n": 1}}'),
            ("/profile-tips/confirm", "https://r.example/confirmed/", '{"k": "v"}'),
        ]
        insert_raw_events(engine, rows, at=AT, kind="link click")
        upgrade(engine)
        e = analytics_events.c
        with engine.connect() as connection:
            stored = connection.execute(select(e.path, e.referrer, e.props).order_by(e.id)).all()
        engine.dispose()
    assert [tuple(row) for row in stored] == [
        ("/newsletter/unsubscribe/redacted", "https://other.example/x/profile/redacted", None),
        ("/a", "", {"href": "https://news.example/n/confirm/redacted", "n": 1}),
        ("/profile-tips/confirm", "https://r.example/confirmed/", {"k": "v"}),
    ]


def test_0006_repairs_sqlite_text_that_is_not_utf8(tmp_path: Path) -> None:
    with empty_database(tmp_path) as url:
        engine = make_engine(url)
        if engine.dialect.name != "sqlite":
            pytest.skip("only SQLite's TEXT holds bytes that are not UTF-8")
        upgrade(engine, BEFORE)
        with engine.begin() as connection:
            connection.execute(
                text(
                    "INSERT INTO nc_analytics_events (occurred_at, day, event_type, visitor_id, "
                    "session_id, path, referrer, props) VALUES (:at, :day, 'pageview', "
                    "CAST(X'76C0' AS TEXT), 's', CAST(X'2FFF61' AS TEXT), '', "
                    "CAST(X'7B226B223A2280FF227D' AS TEXT)), "
                    "(:at, :day, 'pageview', 'v', 's', '/\u00e9', '', '{\"k\": \"\u00e9\"}')"
                ),
                {"at": AT, "day": AT.date()},
            )
        upgrade(engine)
        e = analytics_events.c
        with engine.connect() as connection:  # a plain read: no decoding error left
            stored = connection.execute(select(e.visitor_id, e.path, e.props).order_by(e.id)).all()
        engine.dispose()
    assert [tuple(row) for row in stored] == [
        ("v\ufffd", "/\ufffda", {"k": "\ufffd\ufffd"}),
        ("v", "/\u00e9", {"k": "\u00e9"}),
    ]
