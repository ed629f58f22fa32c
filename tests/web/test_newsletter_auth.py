"""/status and Newsletter API authentication (docs/newsletter-api.md, "Check the key" and
"unauthorized"), through create_app."""

from __future__ import annotations

from typing import Any

import falcon.testing
import pytest

from newsletter_connector import NewsletterService, create_app
from newsletter_connector.errors import NotMigrated
from newsletter_connector.plugins.sql_store import SqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine

STATUS = "/api/newsletter/v1/status"


def test_status_reports_version_and_key_label(newsletter_client: Any, auth: dict[str, str]) -> None:
    result = newsletter_client.simulate_get(STATUS, headers=auth)
    assert result.status_code == 200
    assert result.json == {"ok": True, "version": "v1", "key": "tests"}
    assert result.headers["content-type"].startswith("application/json")


@pytest.mark.parametrize(
    "header",
    [
        None,
        "",
        "Bearer",
        "Bearer ",
        "Basic dXNlcjpwYXNz",
        "Token nlk_abc",
        "Bearer nlk_unknownkeyvalue",
        "Bearer not-our-format",
        "Bearer nlk_a nlk_b",
        "Bearer " + "x" * 5000,
    ],
)
def test_missing_malformed_or_unknown_key_is_401(
    newsletter_client: Any, api_key: str, header: str | None
) -> None:
    headers = {} if header is None else {"Authorization": header}
    result = newsletter_client.simulate_get(STATUS, headers=headers)
    assert result.status_code == 401
    assert result.json["error"] == "unauthorized"
    assert result.json["message"]
    assert set(result.json) == {"error", "message"}
    assert result.headers["www-authenticate"].startswith("Bearer")
    assert api_key not in result.text


def test_scheme_is_case_insensitive(newsletter_client: Any, api_key: str) -> None:
    result = newsletter_client.simulate_get(STATUS, headers={"Authorization": f"bearer {api_key}"})
    assert result.status_code == 200


def test_revoked_key_fails_on_the_next_request(
    newsletter_client: Any, newsletter_service: Any, auth: dict[str, str]
) -> None:
    assert newsletter_client.simulate_get(STATUS, headers=auth).status_code == 200
    newsletter_service.admin.revoke_api_key("tests")
    result = newsletter_client.simulate_get(STATUS, headers=auth)
    assert result.status_code == 401
    assert result.json["error"] == "unauthorized"


def test_other_keys_keep_working_after_a_revocation(
    newsletter_client: Any, newsletter_service: Any, auth: dict[str, str]
) -> None:
    other = newsletter_service.admin.create_api_key("other").key
    newsletter_service.admin.revoke_api_key("tests")
    result = newsletter_client.simulate_get(STATUS, headers={"Authorization": f"Bearer {other}"})
    assert result.json == {"ok": True, "version": "v1", "key": "other"}


def test_unknown_newsletter_path_is_404_in_api_shape(newsletter_client: Any) -> None:
    result = newsletter_client.simulate_get("/api/newsletter/v1/nope")
    assert result.status_code == 404
    assert result.json["error"] == "not_found"


def test_wrong_method_is_405_in_api_shape(newsletter_client: Any, auth: dict[str, str]) -> None:
    result = newsletter_client.simulate_post(STATUS, headers=auth)
    assert result.status_code == 405
    assert result.json["error"] == "method_not_allowed"
    assert "GET" in result.headers["allow"]


def test_unreachable_database_answers_503_db_unavailable(newsletter_settings: Any) -> None:
    # A PostgreSQL URL on a port nothing listens on: the app still starts, requests answer 503.
    settings = newsletter_settings.model_copy(
        update={"database_url": "postgresql://nobody@127.0.0.1:9/none"}
    )
    storage = SqlStorage(make_engine(settings.database_url, connect_args={"connect_timeout": 2}))
    service = NewsletterService.build(settings, storage=storage)
    client = falcon.testing.TestClient(create_app(service=service))
    result = client.simulate_get(STATUS, headers={"Authorization": "Bearer nlk_whatever"})
    assert result.status_code == 503
    assert result.json == {
        "error": "db_unavailable",
        "message": result.json["message"],
    }
    assert result.headers["retry-after"] == "5"
    assert "nobody" not in result.text and "Traceback" not in result.text


def test_unmigrated_database_refuses_to_serve(tmp_path: Any, newsletter_settings: Any) -> None:
    settings = newsletter_settings.model_copy(
        update={"database_url": f"sqlite:///{tmp_path / 'fresh.db'}"}
    )
    with pytest.raises(NotMigrated, match="newsletter-connector db upgrade"):
        create_app(settings)


def test_surfaces_not_built_yet_answer_404(newsletter_client: Any) -> None:
    # The list-source surface is built but off until its credentials are set (its own tests).
    assert newsletter_client.simulate_get("/api/listsource/api/health").status_code == 404
    # Export is built: without a configured connection it answers the unknown-path 404.
    status = newsletter_client.simulate_get("/api/export/status")
    unknown = newsletter_client.simulate_get("/api/export/no-such-endpoint")
    assert status.status_code == unknown.status_code == 404
    assert status.content == unknown.content


@pytest.mark.parametrize("space", [" ", "\t", "\x0b", "\x1c", "\x85", "\xa0", "\u2003", "\u3000"])
def test_a_token_with_any_whitespace_inside_is_malformed(space: str) -> None:
    from falcon import testing

    from newsletter_connector.web.auth import bearer_token

    def token(header: str) -> str | None:
        return bearer_token(testing.create_req(headers={"Authorization": header}))

    assert space.isspace()
    assert token(f"Bearer nlk_a{space}b") is None
    assert token(f"Bearer nlk_ab{space}") == "nlk_ab"  # trailing space is trimmed
