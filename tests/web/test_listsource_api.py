"""docs/listsource.md: the list-source surface through create_app (falcon TestClient)."""

from __future__ import annotations

import base64
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import func, select

from newsletter_connector.plugins.sql_store.tables import kv_settings, outbox_events
from tests.support.listmonk_shapes import (
    CampaignResponse,
    CampaignsResponse,
    ErrorResponse,
    ListsResponse,
    assert_campaign_field_order,
)
from tests.support.listsource_fixtures import (
    HTML,
    T0,
    insert_issue,
    insert_issues,
    insert_subscriber,
)

BASE = "/api/listsource"
USER = "platform"
KEY = "listsource-key:with-colon-0123"
PATHS = ["/api/health", "/api/campaigns", "/api/campaigns/1", "/api/lists", "/api/nope", ""]
WRITE_VERBS = ["POST", "PUT", "PATCH", "DELETE"]


def basic(user: str = USER, key: str = KEY) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{key}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def token(user: str = USER, key: str = KEY) -> dict[str, str]:
    return {"Authorization": f"token {user}:{key}"}


@pytest.fixture
def on(newsletter_service: Any) -> dict[str, str]:
    """The surface switched on; returns Basic headers for it."""
    newsletter_service.admin.set_listsource_credentials(USER, KEY)
    return basic()


def get(client: Any, path: str, headers: dict[str, str], **params: Any) -> Any:
    return client.simulate_get(BASE + path, headers=headers, params=params or None)


# -- the off switch ----------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["GET", "HEAD", "OPTIONS", *WRITE_VERBS])
@pytest.mark.parametrize("path", PATHS)
def test_off_every_request_is_404(newsletter_client: Any, method: str, path: str) -> None:
    for headers in ({}, basic(), token()):
        result = newsletter_client.simulate_request(method, BASE + path, headers=headers)
        assert result.status_code == 404
        if method != "HEAD":
            ErrorResponse.model_validate(result.json)


def test_disabling_turns_it_off_again(
    newsletter_client: Any, newsletter_service: Any, on: dict[str, str]
) -> None:
    assert get(newsletter_client, "/api/health", on).status_code == 200
    newsletter_service.admin.disable_listsource()
    assert get(newsletter_client, "/api/health", on).status_code == 404


# -- credentials -------------------------------------------------------------------------------


@pytest.mark.parametrize("form", [basic, token])
def test_both_header_forms_are_accepted(newsletter_client: Any, on: Any, form: Any) -> None:
    result = get(newsletter_client, "/api/health", form())
    assert result.status_code == 200
    assert result.json == {"data": True}
    assert result.headers["content-type"].startswith("application/json")


def test_scheme_names_are_case_insensitive(newsletter_client: Any, on: Any) -> None:
    raw = base64.b64encode(f"{USER}:{KEY}".encode()).decode()
    assert get(newsletter_client, "/api/health", {"Authorization": f"basic {raw}"}).json == {
        "data": True
    }
    assert get(newsletter_client, "/api/health", {"Authorization": f"Token {USER}:{KEY}"}).json


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


@pytest.mark.parametrize(
    "header",
    [
        None,
        "",
        "Basic",
        "Basic !!!not-base64!!!",
        f"Basic {_b64(USER + KEY)}",  # no colon
        f"Basic {_b64(':' + KEY)}",  # empty user
        f"Basic {_b64(USER + ':')}",  # empty key
        f"Basic {_b64(USER + ':wrong-key-000000')}",
        f"Basic {_b64('someone:' + KEY)}",
        f"token {USER}:wrong-key-000000",
        f"token {USER}",
        f"Bearer {KEY}",
        f"token {USER}:{KEY}" + "x" * 5000,
        "Basic " + base64.b64encode(b"platform:\xff\xfe").decode(),  # not UTF-8
    ],
)
def test_bad_credentials_are_401_with_a_challenge(
    newsletter_client: Any, on: Any, header: str | None
) -> None:
    headers = {} if header is None else {"Authorization": header}
    for path in ("/api/health", "/api/campaigns", "/api/nope"):
        result = get(newsletter_client, path, headers)
        assert result.status_code == 401
        assert result.headers["www-authenticate"].startswith("Basic realm=")
        ErrorResponse.model_validate(result.json)
        assert KEY not in result.text


def test_credentials_are_checked_before_method_and_path(newsletter_client: Any, on: Any) -> None:
    result = newsletter_client.simulate_post(BASE + "/api/campaigns")
    assert result.status_code == 401
    assert newsletter_client.simulate_get(BASE + "/api/nope").status_code == 401


# -- methods and paths -------------------------------------------------------------------------


@pytest.mark.parametrize("method", [*WRITE_VERBS, "OPTIONS"])
@pytest.mark.parametrize("path", PATHS)
def test_other_methods_are_405_on_every_path(
    newsletter_client: Any, on: dict[str, str], method: str, path: str
) -> None:
    insert_issue(newsletter_client.app.service.storage, created_at=T0)
    result = newsletter_client.simulate_request(method, BASE + path, headers=on, json={"x": 1})
    assert result.status_code == 405
    assert result.headers["allow"] == "GET, HEAD"
    ErrorResponse.model_validate(result.json)
    with newsletter_client.app.service.storage.transaction(write=False) as uow:
        assert uow.issues.count() == 1  # a rejected request changes nothing


@pytest.mark.parametrize(
    "path", ["", "/", "/api", "/api/", "/api/campaigns/", "/api/campaigns/1/preview", "/health"]
)
def test_unknown_paths_are_404_message(newsletter_client: Any, on: Any, path: str) -> None:
    result = get(newsletter_client, path, on)
    assert result.status_code == 404
    assert result.json == {"message": "404 unknown endpoint"}


def test_prefix_lookalike_is_not_the_surface(newsletter_client: Any, on: Any) -> None:
    result = newsletter_client.simulate_get("/api/listsourcex/api/health", headers=on)
    assert result.status_code == 404
    assert result.headers["content-type"].startswith("text/html")


def test_head_is_get_without_a_body(newsletter_client: Any, on: Any) -> None:
    insert_issues(newsletter_client.app.service.storage, 2)
    for path in ("/api/health", "/api/campaigns", "/api/lists"):
        head = newsletter_client.simulate_head(BASE + path, headers=on)
        assert head.status_code == 200
        assert head.text == ""
        assert head.headers["content-type"].startswith("application/json")
    assert newsletter_client.simulate_head(BASE + "/api/nope", headers=on).status_code == 404
    assert newsletter_client.simulate_head(BASE + "/api/campaigns/999", headers=on).status_code == (
        404
    )


def test_health_has_no_side_effects(newsletter_client: Any, on: Any) -> None:
    storage = newsletter_client.app.service.storage

    def snapshot() -> Any:
        with storage.engine.connect() as connection:
            settings = connection.execute(select(kv_settings).order_by(kv_settings.c.name)).all()
            events = connection.scalar(select(func.count()).select_from(outbox_events))
        return settings, events

    before = snapshot()
    for _ in range(3):
        assert get(newsletter_client, "/api/health", on).json == {"data": True}
    assert snapshot() == before


# -- campaigns ---------------------------------------------------------------------------------


def test_campaigns_default_page(newsletter_client: Any, on: Any) -> None:
    ids = insert_issues(newsletter_client.app.service.storage, 25)
    result = get(newsletter_client, "/api/campaigns", on)
    assert result.status_code == 200
    body = CampaignsResponse.model_validate(result.json).data
    assert (body.total, body.per_page, body.page, body.query) == (25, 20, 1, "")
    assert [c.id for c in body.results] == list(reversed(ids))[:20]  # DESC by default
    for campaign in result.json["data"]["results"]:
        assert_campaign_field_order(campaign)
    assert list(result.json["data"]) == ["results", "search", "query", "total", "per_page", "page"]


@pytest.mark.parametrize("order", ["asc", "desc"])
@pytest.mark.parametrize("per_page", [1, 7, 20])
def test_paging_never_repeats_or_skips(
    newsletter_client: Any, on: Any, order: str, per_page: int
) -> None:
    # Three issues share each created_at, so only the id tie-break keeps pages stable.
    ids = insert_issues(newsletter_client.app.service.storage, 23, same_time_every=3)
    seen: list[int] = []
    page = 1
    while True:
        data = get(
            newsletter_client, "/api/campaigns", on, page=page, per_page=per_page, order=order
        ).json["data"]
        assert data["total"] == 23 and data["page"] == page and data["per_page"] == per_page
        if not data["results"]:
            break
        seen += [c["id"] for c in data["results"]]
        page += 1
    assert seen == (ids if order == "asc" else list(reversed(ids)))
    assert page == -(-23 // per_page) + 1


def test_order_is_by_created_at_then_id(newsletter_client: Any, on: Any) -> None:
    storage = newsletter_client.app.service.storage
    newest = insert_issue(storage, created_at=T0 + timedelta(days=5))
    oldest = insert_issue(storage, created_at=T0)
    middle = insert_issue(storage, created_at=T0 + timedelta(days=1))
    results = get(newsletter_client, "/api/campaigns", on, order="asc").json["data"]["results"]
    assert [c["id"] for c in results] == [oldest, middle, newest]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        *[("all", 100), ("100", 100), ("101", 100), ("1000000", 100), ("-1", 100), ("1", 1)],
        *[("0", 20), ("", 20), ("abc", 20), ("2.5", 20), (" 5", 20), ("99999999999999999999", 20)],
        *[("+5", 5), ("007", 7), ("ALL", 20)],
    ],
)
def test_per_page_is_lenient_within_the_cap(
    newsletter_client: Any, on: Any, value: str, expected: int
) -> None:
    insert_issues(newsletter_client.app.service.storage, 120)
    data = get(newsletter_client, "/api/campaigns", on, per_page=value).json["data"]
    assert data["per_page"] == expected
    assert len(data["results"]) == expected
    assert data["total"] == 120


@pytest.mark.parametrize(
    ("value", "expected"),
    [("2", 2), ("0", 1), ("-3", 1), ("abc", 1), ("", 1), ("99999999999999999999", 1)],
)
def test_page_is_lenient(newsletter_client: Any, on: Any, value: str, expected: int) -> None:
    insert_issues(newsletter_client.app.service.storage, 25)
    data = get(newsletter_client, "/api/campaigns", on, page=value).json["data"]
    assert data["page"] == expected
    assert len(data["results"]) == (5 if expected == 2 else 20)


def test_page_past_the_end_is_empty_with_the_true_total(newsletter_client: Any, on: Any) -> None:
    insert_issues(newsletter_client.app.service.storage, 3)
    for page in ("2", "9223372036854775807"):
        data = get(newsletter_client, "/api/campaigns", on, page=page, per_page="all").json["data"]
        assert data == {
            "results": [],
            "search": "",
            "query": "",
            "total": 3,
            "per_page": 100,
            "page": int(page),
        }


@pytest.mark.parametrize("value", ["asc", "ASC", "Asc", "desc", "DESC", "sideways", ""])
def test_order_values(newsletter_client: Any, on: Any, value: str) -> None:
    ids = insert_issues(newsletter_client.app.service.storage, 4)
    results = get(newsletter_client, "/api/campaigns", on, order=value).json["data"]["results"]
    expected = ids if value.lower() == "asc" else list(reversed(ids))
    assert [c["id"] for c in results] == expected


@pytest.mark.parametrize(
    ("query", "matches"),
    [
        ("status=finished", True),
        ("status=draft&status=finished", True),
        ("status=", True),
        ("", True),
        ("status=draft", False),
        ("status=running&status=paused", False),
        ("status=FINISHED", False),
        ("status=finished,draft", False),
        ("status=foo", False),
    ],
)
def test_status_filter(newsletter_client: Any, on: Any, query: str, matches: bool) -> None:
    insert_issues(newsletter_client.app.service.storage, 3)
    result = newsletter_client.simulate_get(
        BASE + "/api/campaigns", headers=on, query_string=query + "&per_page=2"
    )
    assert result.status_code == 200
    data = CampaignsResponse.model_validate(result.json).data
    assert data.total == (3 if matches else 0)
    assert len(data.results) == (2 if matches else 0)
    assert (data.page, data.per_page) == (1, 2)


def test_ignored_listmonk_params_change_nothing(newsletter_client: Any, on: Any) -> None:
    insert_issues(newsletter_client.app.service.storage, 3)
    plain = get(newsletter_client, "/api/campaigns", on).json
    noisy = newsletter_client.simulate_get(
        BASE + "/api/campaigns",
        headers=on,
        query_string="query=zzz&order_by=name&tag=x&no_body=true&pretty&page=1&page=2",
    ).json
    assert noisy == plain


def test_empty_store_answers_an_empty_page(newsletter_client: Any, on: Any) -> None:
    data = get(newsletter_client, "/api/campaigns", on).json["data"]
    assert data == {"results": [], "search": "", "query": "", "total": 0, "per_page": 20, "page": 1}


# -- one campaign ------------------------------------------------------------------------------


def test_campaign_object_fields_and_values(
    newsletter_client: Any, newsletter_settings: Any, on: Any
) -> None:
    storage = newsletter_client.app.service.storage
    created = datetime(2026, 11, 21, 6, 30, 0, 123450)
    issue_id = insert_issue(
        storage,
        created_at=created,
        kind="weekly",
        subject="This week",
        updated_at=datetime(2026, 11, 21, 6, 30, 2),
    )
    result = get(newsletter_client, f"/api/campaigns/{issue_id}", on)
    assert result.status_code == 200
    campaign = result.json["data"]
    CampaignResponse.model_validate(result.json)
    assert_campaign_field_order(campaign)
    with storage.transaction(write=False) as uow:
        record = uow.issues.get(issue_id)
    assert campaign == {
        "id": issue_id,
        "campaign_id": issue_id,
        "created_at": "2026-11-21T06:30:00.12345Z",
        "updated_at": "2026-11-21T06:30:02Z",
        "views": 0,
        "clicks": 0,
        "bounces": 0,
        "lists": [{"id": 1, "name": newsletter_settings.list_name}],
        "media": [],
        "started_at": None,
        "to_send": 0,
        "sent": 0,
        "uuid": record.uuid,
        "type": "regular",
        "name": "Weekly issue 2026-11-21",
        "subject": "This week",
        "from_email": newsletter_settings.from_address,
        "body": HTML,
        "body_source": None,
        "altbody": "Hello and welcome",
        "send_at": None,
        "status": "finished",
        "content_type": "html",
        "tags": ["weekly"],
        "headers": [],
        "attribs": {},
        "template_id": 0,
        "messenger": "email",
        "archive": False,
        "archive_slug": None,
        "archive_template_id": None,
        "archive_meta": {},
    }
    listed = get(newsletter_client, "/api/campaigns", on).json["data"]["results"]
    assert listed == [campaign]  # same shape in the list and alone


def test_campaign_tags_carry_cadence_and_a_differing_kind(newsletter_client: Any, on: Any) -> None:
    storage = newsletter_client.app.service.storage
    test_id = insert_issue(storage, created_at=T0, kind="test", cadence="daily", text=None)
    campaign = get(newsletter_client, f"/api/campaigns/{test_id}", on).json["data"]
    assert campaign["tags"] == ["daily", "test"]
    assert campaign["name"] == "Test issue 2026-11-01"
    assert campaign["altbody"] is None


@pytest.mark.parametrize(
    "campaign_id", ["999", "0", "-1", "abc", "1.0", "9223372036854775807", "99999999999999999999"]
)
def test_unknown_or_malformed_campaign_id_is_404(
    newsletter_client: Any, on: Any, campaign_id: str
) -> None:
    insert_issue(newsletter_client.app.service.storage, created_at=T0)
    result = get(newsletter_client, f"/api/campaigns/{campaign_id}", on)
    assert result.status_code == 404
    assert result.json == {"message": "Campaign not found"}


# -- the list ----------------------------------------------------------------------------------


def test_lists_single_list_counts_confirmed_only(
    newsletter_client: Any, newsletter_settings: Any, on: Any
) -> None:
    storage = newsletter_client.app.service.storage
    for status in ("confirmed", "confirmed", "confirmed", "pending", "unsubscribed", "bounced"):
        insert_subscriber(storage, status=status)
    result = get(newsletter_client, "/api/lists", on)
    assert result.status_code == 200
    data = ListsResponse.model_validate(result.json).data
    assert (data.total, data.page, data.per_page) == (1, 1, 20)
    (the_list,) = result.json["data"]["results"]
    assert the_list["id"] == 1
    assert the_list["name"] == newsletter_settings.list_name
    assert the_list["subscriber_count"] == 3
    assert the_list["subscriber_statuses"] == {"confirmed": 3}
    assert list(the_list) == [
        "id",
        "created_at",
        "updated_at",
        "uuid",
        "name",
        "type",
        "optin",
        "status",
        "tags",
        "description",
        "subscriber_count",
        "subscriber_statuses",
        "subscription_created_at",
        "subscription_updated_at",
    ]
    again = get(newsletter_client, "/api/lists", on).json["data"]["results"][0]
    assert (again["uuid"], again["created_at"]) == (the_list["uuid"], the_list["created_at"])


def test_lists_with_no_subscribers(newsletter_client: Any, on: Any) -> None:
    the_list = get(newsletter_client, "/api/lists", on).json["data"]["results"][0]
    assert the_list["subscriber_count"] == 0
    assert the_list["subscriber_statuses"] == {}


def test_lists_paging_values(newsletter_client: Any, on: Any) -> None:
    data = get(newsletter_client, "/api/lists", on, page="2", per_page="1000000").json["data"]
    assert (data["results"], data["total"], data["page"], data["per_page"]) == ([], 1, 2, 100)


def test_every_campaign_belongs_to_the_one_list(newsletter_client: Any, on: Any) -> None:
    insert_issues(newsletter_client.app.service.storage, 5)
    list_id = get(newsletter_client, "/api/lists", on).json["data"]["results"][0]["id"]
    for campaign in get(newsletter_client, "/api/campaigns", on).json["data"]["results"]:
        assert [entry["id"] for entry in campaign["lists"]] == [list_id]


def test_unreachable_database_is_503_message(newsletter_settings: Any) -> None:
    import falcon.testing

    from newsletter_connector import NewsletterService, create_app
    from newsletter_connector.plugins.sql_store import SqlStorage
    from newsletter_connector.plugins.sql_store.engine import make_engine

    settings = newsletter_settings.model_copy(
        update={"database_url": "postgresql://nobody@127.0.0.1:9/none"}
    )
    storage = SqlStorage(make_engine(settings.database_url, connect_args={"connect_timeout": 2}))
    client = falcon.testing.TestClient(
        create_app(service=NewsletterService.build(settings, storage=storage))
    )
    result = client.simulate_get(BASE + "/api/campaigns", headers=basic())
    assert result.status_code == 503
    assert list(result.json) == ["message"]
    assert result.headers["retry-after"] == "5"
    assert KEY not in result.text and "nobody" not in result.text
