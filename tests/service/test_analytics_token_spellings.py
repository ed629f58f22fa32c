"""Action-link tokens never reach the analytics table, however they are spelt: the segment in
any case, with or without the slash before it, ``%2F``/``%2f``/``\\`` for ``/`` (a browser
follows all of them, and the server decodes ``%2F``), percent-encoded once or twice, or the
token bare in a prop. A table of spellings goes through the real capture endpoint into the
database; hypothesis then tries every combination on the sanitising functions themselves, and
migration 0015 brings rows stored before to the same."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from alembic.script import ScriptDirectory
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import select

from newsletter_connector.log_redaction import redact_path
from newsletter_connector.model.analytics import event_wire
from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.plugins.sql_store.migrate import MIGRATIONS_DIR, upgrade
from newsletter_connector.plugins.sql_store.tables import analytics_events
from newsletter_connector.service.analytics_sanitize import clean_path, clean_props, clean_url
from newsletter_connector.service.subscribers import new_token
from tests.plugins.sql_store.test_rollup_day_migration import empty_database
from tests.support.analytics_helpers import client_for, clocked_service, connect, insert_raw_events

T0 = datetime(2026, 5, 4, 10, 0, 0)
IDS = {"visitor_id": "v_0123456789abcdef", "session_id": "s-0123456789"}
SITE = "https://news.example"

#: Each spelling of "the token after a token segment" a browser or the router would follow.
SPELLINGS: dict[str, Callable[[str], str]] = {
    "plain": lambda t: f"/profile/{t}",
    "%2F": lambda t: f"/profile%2F{t}",
    "%2f under a prefix": lambda t: f"/newsletter/unsubscribe%2f{t}",
    "upper case": lambda t: f"/PROFILE/{t}",
    "mixed case": lambda t: f"/newsletter/Confirm/{t}",
    "double slash": lambda t: f"/profile//{t}",
    "backslash": lambda t: f"/profile\\{t}",
    "encoded backslash": lambda t: f"/profile%5C{t}",
    "encoded segment": lambda t: f"/%70rofile/{t}",
    "encoded twice": lambda t: f"/profile%252F{t}",
    "encoded token": lambda t: "/confirm/" + "".join(f"%{ord(c):02X}" for c in t),
    "in a query, encoded": lambda t: f"/story%3Fnext=/profile/{t}",
    "with a page after it": lambda t: f"/profile/{t}/edit",
}
#: Spellings only a text (a prop) holds: no leading slash, or the token alone.
PROP_SPELLINGS: dict[str, Callable[[str], str]] = {
    **SPELLINGS,
    "no leading slash": lambda t: f"profile/{t}",
    "no leading slash, %2F": lambda t: f"Unsubscribe%2F{t}",
    "in a sentence": lambda t: f"came from profile/{t} today",
    "bare": lambda t: t,
    "bare, upper case": lambda t: t.upper(),
    "bare in a sentence": lambda t: f"token {t} here",
}


@pytest.fixture
def service(newsletter_settings: Any, newsletter_storage: Any) -> Any:
    return clocked_service(newsletter_settings, newsletter_storage, T0)[0]


def assert_no_token(stored: Any, token: str, what: str) -> None:
    text = json.dumps(stored, default=str)
    for form in (token, quote(token, safe="")):
        assert form.lower() not in text.lower(), (what, text)


@pytest.mark.parametrize("spelling", list(SPELLINGS))
def test_a_token_in_the_path_referrer_or_link_is_never_stored(service: Any, spelling: str) -> None:
    client = client_for(service)
    token = new_token()
    written = SPELLINGS[spelling](token)
    for body in (
        {"type": "pageview", "path": written, "referrer": SITE + written},
        {"type": "link click", "path": "/story", "href": SITE + written},
    ):
        result = client.simulate_post(
            "/analytics/collect", json={**body, **IDS}, headers={"Content-Type": "text/plain"}
        )
        assert result.status_code == 204, result.text
    events = [event_wire(e) for e in service.analytics.events_page(0, 10).events]
    assert len(events) == 2
    assert_no_token(events, token, spelling)
    assert "redacted" in events[0]["path"] and "redacted" in events[1]["props"]["href"]


def test_a_token_in_props_is_never_stored(service: Any) -> None:
    client = client_for(service)
    tokens = {name: new_token() for name in PROP_SPELLINGS}
    names = list(PROP_SPELLINGS)
    for start in range(0, len(names), 10):  # ten props an event at most
        props = {f"p{i}": PROP_SPELLINGS[n](tokens[n]) for i, n in enumerate(names[start:][:10])}
        result = client.simulate_post(
            "/analytics/collect",
            json={"type": "pageview", "path": "/", "props": props, **IDS},
            headers={"Content-Type": "text/plain"},
        )
        assert result.status_code == 204, result.text
    stored = [event_wire(e) for e in service.analytics.events_page(0, 10).events]
    for name, token in tokens.items():
        assert_no_token(stored, token, name)


def test_ordinary_props_and_paths_are_left_alone(service: Any) -> None:
    client = client_for(service)
    props = {
        "campaign": "spring_newsletter_signup_footer",
        "slug": "top-ten-recipes-for-the-holidays",
        "profile": "profile page",
        "count": 3,
    }
    result = client.simulate_post(
        "/analytics/collect",
        json={"type": "pageview", "path": "/caf%C3%A9/profile", "props": props, **IDS},
        headers={"Content-Type": "text/plain"},
    )
    assert result.status_code == 204
    (event,) = service.analytics.events_page(0, 10).events
    assert event.props == props
    assert event.path == "/caf%C3%A9/profile"


#: Control characters (and a line separator), percent-encoded: decoding them to find a token
#: must not store them decoded.
ENCODED_CONTROLS = "%0A%0D%00%1B%E2%80%A8"
DECODED_CONTROLS = "\n\r\x00\x1b\u2028"


def test_control_characters_around_a_token_stay_encoded_through_capture_and_export(
    service: Any,
) -> None:
    """Redacting a token substitutes into the text as sent: an encoded line break or escape
    next to it is stored and exported still encoded, in paths, referrers, links and props."""
    client = client_for(service)
    auth = connect(service)
    token = new_token()
    written = f"/n{ENCODED_CONTROLS}/profile%2F{token}{ENCODED_CONTROLS}x"
    bodies = [
        {"type": "pageview", "path": written, "referrer": SITE + written},
        {"type": "link click", "path": "/story", "href": SITE + written},
        {
            "type": "pageview",
            "path": "/",
            "props": {
                "a": f"see profile/{token}{ENCODED_CONTROLS}x",
                "b": f"{ENCODED_CONTROLS}{token}{ENCODED_CONTROLS}",
                "c": f"%252F{ENCODED_CONTROLS}profile%252F{token}",
            },
        },
    ]
    for body in bodies:
        result = client.simulate_post(
            "/analytics/collect", json={**body, **IDS}, headers={"Content-Type": "text/plain"}
        )
        assert result.status_code == 204, result.text
    stored = [event_wire(e) for e in service.analytics.events_page(0, 10).events]
    exported = client.simulate_get("/api/export/events", headers=auth)
    assert exported.status_code == 200, exported.text
    events = exported.json["events"]
    assert len(stored) == len(events) == 3
    for values in (stored, events):
        assert_no_token(values, token, "controls")
        for text in _texts(values):
            assert not any(c in text for c in DECODED_CONTROLS), (text, values)
    by_type = {(e["event_type"], e["path"]): e for e in events}
    page = by_type[("pageview", f"/n{ENCODED_CONTROLS}/profile/redacted{ENCODED_CONTROLS}x")]
    assert page["referrer"] == SITE + page["path"]
    (click,) = [e for e in events if e["event_type"] == "link click"]
    assert click["props"]["href"] == SITE + page["path"]
    assert by_type[("pageview", "/")]["props"] == {
        "a": f"see profile/redacted{ENCODED_CONTROLS}x",
        "b": f"{ENCODED_CONTROLS}redacted{ENCODED_CONTROLS}",
        "c": f"%252F{ENCODED_CONTROLS}profile/redacted",
    }


def _texts(value: Any) -> list[str]:
    """Every string in a JSON value (keys and values)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for k, v in value.items() for t in (*_texts(k), *_texts(v))]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    return []


TOKEN_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
tokens = st.text(TOKEN_ALPHABET, min_size=32, max_size=43).filter(
    lambda t: any(c.isupper() for c in t) and any(c.islower() for c in t)
)
segments = st.sampled_from(["confirm", "unsubscribe", "profile"]).flatmap(
    lambda word: st.lists(st.booleans(), min_size=len(word), max_size=len(word)).map(
        lambda upper: "".join(c.upper() if u else c for c, u in zip(word, upper, strict=True))
    )
)
separators = st.sampled_from(["/", "//", "%2F", "%2f", "\\", "%5C", "%252F", "/%2F"])
prefixes = st.sampled_from(["/", "/newsletter/", "/a/b/"])
encodings = st.sampled_from(["none", "segment", "token", "all"])


def spelt(prefix: str, segment: str, separator: str, token: str, encoding: str) -> str:
    def encoded(text: str) -> str:
        return "".join(f"%{ord(c):02x}" for c in text)

    if encoding in ("segment", "all"):
        segment = encoded(segment)
    if encoding in ("token", "all"):
        token = encoded(token)
    return f"{prefix}{segment}{separator}{token}"


@given(prefixes, segments, separators, tokens, encodings)
def test_no_spelling_of_a_token_survives_sanitising(
    prefix: str, segment: str, separator: str, token: str, encoding: str
) -> None:
    written = spelt(prefix, segment, separator, token, encoding)
    kept = [
        clean_path(written),
        clean_url(SITE + written, "referrer", allow_empty=False),
        json.dumps(clean_props({"a": written, "b": written.lstrip("/"), "c": token})),
        redact_path(written),  # the access log
    ]
    for value in kept:
        assert token.lower() not in value.lower(), (written, value)


def test_0015_redacts_every_spelling_stored_before_capture_found_it(tmp_path: Path) -> None:
    """Rows stored while capture knew only ``/profile/<token>`` are brought to what it stores
    now (more rows than one batch of the migration, so its paging runs too)."""
    token = new_token()
    before = str(ScriptDirectory(str(MIGRATIONS_DIR)).get_revision("0015").down_revision)
    with empty_database(tmp_path) as url:
        engine = make_engine(url)
        upgrade(engine, before)
        leaking = [
            (SPELLINGS[name](token), SITE + SPELLINGS[name](token), None)
            for name in ("%2F", "upper case", "backslash", "encoded segment", "encoded twice")
        ] + [
            ("/", "", json.dumps({"a": f"profile/{token}", "b": token, "n": 1})),
            ("/", "", json.dumps({"note": f"Unsubscribe%2F{token}"})),
        ]
        clean = [("/story", "https://search.example/q", json.dumps({"k": "spring_campaign"}))]
        rows = leaking + clean * 1200
        insert_raw_events(engine, rows, at=T0)
        upgrade(engine)
        e = analytics_events.c
        with engine.connect() as connection:
            stored = connection.execute(select(e.path, e.referrer, e.props).order_by(e.id)).all()
        engine.dispose()
    assert len(stored) == len(rows)
    assert_no_token([tuple(row) for row in stored], token, "after 0015")
    assert tuple(stored[0]) == ("/profile/redacted", SITE + "/profile/redacted", None)
    assert stored[5].props == {"a": "profile/redacted", "b": "redacted", "n": 1}
    assert all(
        tuple(row) == ("/story", "https://search.example/q", {"k": "spring_campaign"})
        for row in stored[len(leaking) :]
    )


def test_0015_keeps_encoded_control_characters_encoded(tmp_path: Path) -> None:
    """The migration redacts with capture's functions: a stored token next to encoded line
    breaks and escapes is redacted, the rest of the row left as it was stored."""
    token = new_token()
    before = str(ScriptDirectory(str(MIGRATIONS_DIR)).get_revision("0015").down_revision)
    path = f"/n{ENCODED_CONTROLS}/profile%2F{token}{ENCODED_CONTROLS}x"
    props = {"a": f"Profile%2F{token}{ENCODED_CONTROLS}", "b": f"{ENCODED_CONTROLS}{token}"}
    with empty_database(tmp_path) as url:
        engine = make_engine(url)
        upgrade(engine, before)
        insert_raw_events(engine, [(path, SITE + path, json.dumps(props))], at=T0)
        upgrade(engine)
        e = analytics_events.c
        with engine.connect() as connection:
            (stored,) = connection.execute(select(e.path, e.referrer, e.props)).all()
        engine.dispose()
    redacted = f"/n{ENCODED_CONTROLS}/profile/redacted{ENCODED_CONTROLS}x"
    assert tuple(stored) == (
        redacted,
        SITE + redacted,
        {"a": f"Profile/redacted{ENCODED_CONTROLS}", "b": f"{ENCODED_CONTROLS}redacted"},
    )
