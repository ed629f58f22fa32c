"""``/metrics`` through the app: absent (an unknown path, byte for byte) without a
``metrics_token``; with one, bearer only (constant-time compare); request counts and latency
by route template, method and status class, 503s by cause, 429s, the outbox figures read at
scrape time, the runner's counters; and no label value ever holding a path, token or address.
(Real gunicorn with several workers: tests/observability/test_observability_server.py.)
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import falcon.testing
import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from newsletter_connector import NewsletterService, create_app
from newsletter_connector.plugins.sql_store import SqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.settings import Settings, SettingsError
from newsletter_connector.sync.runner import SyncRunner
from newsletter_connector.web.metrics import warn_unsummed

METRICS_TOKEN = "metrics-token-0123456789abcdef"
BEARER = {"Authorization": f"Bearer {METRICS_TOKEN}"}
EMAIL = "reader.metrics@example.org"
LINK_TOKEN = "Zm9vYmFyLWxpbmstdG9rZW4tc2VjcmV0"


def revalidated(settings: Settings, **update: Any) -> Settings:
    """``settings`` with ``update`` applied and validated (``model_copy`` does not validate)."""
    return Settings(**{**settings.model_dump(), **update})


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a Prometheus text by (name, sorted labels)."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(text: str, name: str, **labels: str) -> float:
    return samples(text).get((name, tuple(sorted(labels.items()))), 0.0)


@pytest.fixture
def metrics_service(newsletter_settings: Any, newsletter_storage: Any) -> NewsletterService:
    settings = revalidated(newsletter_settings, metrics_token=METRICS_TOKEN, rate_limit_analytics=1)
    return NewsletterService.build(settings, storage=newsletter_storage)


@pytest.fixture
def client(metrics_service: NewsletterService) -> falcon.testing.TestClient:
    return falcon.testing.TestClient(create_app(service=metrics_service))


def scrape(client: falcon.testing.TestClient) -> str:
    result = client.simulate_get("/metrics", headers=BEARER)
    assert result.status_code == 200
    assert result.headers["content-type"].startswith("text/plain; version=0.0.4")
    assert result.headers["cache-control"] == "no-store"
    return result.text


def test_without_a_token_the_path_is_an_unknown_path(newsletter_client: Any) -> None:
    for method in ("GET", "HEAD", "POST"):
        metrics = newsletter_client.simulate_request(method, "/metrics", headers=BEARER)
        unknown = newsletter_client.simulate_request(method, "/metricz", headers=BEARER)
        assert metrics.status_code == 404
        assert metrics.content == unknown.content
        assert metrics.headers == unknown.headers


@pytest.mark.parametrize(
    "authorization",
    [
        None,
        "",
        "Bearer",
        f"Basic {METRICS_TOKEN}",
        f"Bearer {METRICS_TOKEN[:-1]}",
        f"Bearer {METRICS_TOKEN}x",
        f"Bearer {METRICS_TOKEN.upper()}",
        "Bearer " + "é" * 30,
        "Bearer " + "x" * 5000,
    ],
)
def test_a_scrape_without_the_token_is_refused(client: Any, authorization: str | None) -> None:
    headers = {} if authorization is None else {"Authorization": authorization}
    result = client.simulate_get("/metrics", headers=headers)
    assert result.status_code == 401
    assert result.headers["www-authenticate"] == 'Bearer realm="metrics"'
    assert result.text == "unauthorized\n"
    assert "newsletter_" not in result.text


def test_the_bearer_scheme_is_case_insensitive(client: Any) -> None:
    result = client.simulate_get("/metrics", headers={"Authorization": f"bearer {METRICS_TOKEN}"})
    assert result.status_code == 200


@pytest.mark.filterwarnings("ignore:Unknown REQUEST_METHOD")  # wsgiref's validator on BREW
def test_requests_are_counted_by_route_template_method_and_status_class(client: Any) -> None:
    before = scrape(client)
    for _ in range(3):
        assert client.simulate_get("/healthz").status_code == 200
    client.simulate_get(f"/confirm/{LINK_TOKEN}")
    client.simulate_get(f"/profile/{LINK_TOKEN}")
    client.simulate_get(f"/no/such/{EMAIL}")
    client.simulate_request("BREW", "/healthz")
    after = scrape(client)

    def grew(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    ok = {"route": "/healthz", "method": "GET", "status_class": "2xx"}
    assert grew("newsletter_http_requests_total", **ok) == 3
    assert grew("newsletter_http_request_duration_seconds_count", **ok) == 3
    assert grew("newsletter_http_request_duration_seconds_sum", **ok) > 0
    assert (
        grew("newsletter_http_requests_total", route="unmatched", method="GET", status_class="4xx")
        == 1
    )
    assert (
        grew("newsletter_http_requests_total", route="/healthz", method="other", status_class="4xx")
        == 1
    )
    routes = {dict(labels).get("route") for _, labels in samples(after)}
    assert "/confirm/{token}" in routes
    for secret in (LINK_TOKEN, EMAIL, "example.org", "no/such", METRICS_TOKEN, "BREW"):
        assert secret not in after


def test_503s_are_counted_by_cause(newsletter_settings: Any) -> None:
    settings = revalidated(
        newsletter_settings,
        database_url="postgresql://nobody:secret@127.0.0.1:9/none",
        metrics_token=METRICS_TOKEN,
    )
    storage = SqlStorage(make_engine(settings.database_url, connect_args={"connect_timeout": 2}))
    service = NewsletterService.build(settings, storage=storage)
    client = falcon.testing.TestClient(create_app(service=service))
    before = client.simulate_get("/metrics", headers=BEARER).text
    status = client.simulate_get(
        "/api/newsletter/v1/status", headers={"Authorization": "Bearer nlk_some-key-value"}
    )
    assert status.status_code == 503
    assert client.simulate_get("/readyz").status_code == 503
    scraped = client.simulate_get("/metrics", headers=BEARER)
    assert scraped.status_code == 200  # the scrape survives the outage
    after = scraped.text
    grew = value(after, "newsletter_http_unavailable_total", cause="db_unavailable") - value(
        before, "newsletter_http_unavailable_total", cause="db_unavailable"
    )
    assert grew == 2
    assert value(after, "newsletter_outbox_status_up") == 0
    assert "newsletter_outbox_failed_events" not in after
    assert "secret" not in after and "nobody" not in after
    service.close()


def test_rate_limited_requests_are_counted(client: Any) -> None:
    event = {"type": "pageview", "visitor_id": "v" * 16, "session_id": "s" * 16, "path": "/"}

    def collect() -> int:
        return int(
            client.simulate_post(
                "/analytics/collect",
                body=json.dumps(event),
                headers={"Content-Type": "text/plain"},
                remote_addr="198.51.100.7",
            ).status_code
        )

    before = value(scrape(client), "newsletter_http_rate_limited_total", route="/analytics/collect")
    assert [collect(), collect(), collect()] == [204, 429, 429]
    after = value(scrape(client), "newsletter_http_rate_limited_total", route="/analytics/collect")
    assert after - before == 2


def test_outbox_figures_are_read_from_the_database_at_scrape_time(
    client: Any, metrics_service: NewsletterService
) -> None:
    assert value(scrape(client), "newsletter_outbox_unbatched_events") == 0
    metrics_service.subscribers.subscribe({"email": EMAIL})
    text = scrape(client)
    assert value(text, "newsletter_outbox_status_up") == 1
    assert value(text, "newsletter_outbox_unbatched_events") == 1
    assert value(text, "newsletter_outbox_undelivered_events") == 1
    assert value(text, "newsletter_outbox_failed_events") == 0
    assert value(text, "newsletter_outbox_waiting_retry_batches") == 0
    assert value(text, "newsletter_outbox_oldest_pending_age_seconds") >= 0
    assert value(text, "newsletter_outbox_batches", state="failed") == 0
    assert EMAIL not in text


def test_the_runner_counts_delivered_and_retried_batches(
    client: Any, metrics_service: NewsletterService
) -> None:
    with metrics_service.storage.transaction() as uow:
        uow.connections.replace(
            platform_base="https://platform.example.test",
            transport="events",
            token="platform-token-0123456789",
            at=metrics_service.context.clock(),
        )
    answers = iter([500, 200])

    def platform(request: httpx.Request) -> httpx.Response:
        return httpx.Response(next(answers), json={})

    runner = SyncRunner(
        metrics_service, periodic_tasks=[], http_transport=lambda: httpx.MockTransport(platform)
    )
    before = scrape(client)
    metrics_service.subscribers.subscribe({"email": EMAIL})
    runner.run_once()  # 500: the batch waits for a retry
    assert metrics_service.admin.retry_outbox_now() == 1
    runner.run_once()  # 200: delivered
    runner.close()
    after = scrape(client)

    def grew(name: str, result: str) -> float:
        return value(after, name, result=result) - value(before, name, result=result)

    assert grew("newsletter_sync_batches_total", "retry") == 1
    assert grew("newsletter_sync_batches_total", "delivered") == 1
    assert grew("newsletter_sync_events_total", "delivered") == 1
    assert grew("newsletter_sync_batches_total", "failed") == 0


def _runner_scrape() -> str:
    """The sync runner's own ``/metrics`` (``sync --metrics-bind``), read through its WSGI app."""
    from wsgiref.util import setup_testing_defaults

    from newsletter_connector.observability.runner_endpoint import metrics_app

    environ: dict[str, Any] = {
        "PATH_INFO": "/metrics",
        "HTTP_AUTHORIZATION": BEARER["Authorization"],
    }
    setup_testing_defaults(environ)
    answered: list[str] = []
    body = metrics_app(METRICS_TOKEN)(environ, lambda status, headers: answered.append(status))
    assert answered == ["200 OK"]
    return b"".join(body).decode()


def test_the_runners_metrics_say_whether_a_platform_is_connected_and_hold_no_http_series(
    client: Any, metrics_service: NewsletterService
) -> None:
    client.simulate_get("/healthz")  # an HTTP series in this process's registry
    SyncRunner(metrics_service, periodic_tasks=[]).run_once()
    unconnected = _runner_scrape()
    assert value(unconnected, "newsletter_sync_connected") == 0
    assert "newsletter_http" not in unconnected  # not even their HELP lines
    assert value(scrape(client), "newsletter_sync_connected") == 0  # the app's, in one process
    with metrics_service.storage.transaction() as uow:
        uow.connections.replace(
            platform_base="https://platform.example.test",
            transport="events",
            token="platform-token-0123456789",
            at=metrics_service.context.clock(),
        )
    runner = SyncRunner(
        metrics_service,
        periodic_tasks=[],
        http_transport=lambda: httpx.MockTransport(lambda request: httpx.Response(200, json={})),
    )
    runner.run_once()
    runner.close()
    assert value(_runner_scrape(), "newsletter_sync_connected") == 1


@pytest.mark.parametrize("token", ["short", "has spaces in it here", "tab\tseparated-token-x"])
def test_a_weak_or_unsendable_token_is_refused_naming_the_setting(token: str) -> None:
    with pytest.raises(SettingsError) as refused:
        Settings.load({"NEWSLETTER_METRICS_TOKEN": token})
    message = str(refused.value)
    assert "metrics_token (env NEWSLETTER_METRICS_TOKEN)" in message
    assert token not in message


def test_the_token_never_shows_in_the_settings_repr() -> None:
    settings = Settings(metrics_token=METRICS_TOKEN)
    assert METRICS_TOKEN not in repr(settings)


def test_a_path_refused_before_routing_is_counted_as_an_unmatched_404(client: Any) -> None:
    before = scrape(client)
    for path in ("//admin", "/admin/./settings", "/healthz/../metrics"):
        assert client.simulate_get(path).status_code == 404
    after = scrape(client)
    labels = {"route": "unmatched", "method": "GET", "status_class": "4xx"}
    for name in (
        "newsletter_http_requests_total",
        "newsletter_http_request_duration_seconds_count",
    ):
        assert value(after, name, **labels) - value(before, name, **labels) == 3


def test_a_worker_without_the_multiprocess_directory_warns_once(
    client: Any, caplog: pytest.LogCaptureFixture, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A host's own gunicorn config that skips ``prepare_directory()`` gets one worker's
    figures per scrape: said once per process, not per scrape, and not outside a worker."""
    warn_unsummed.cache_clear()
    gunicorn = {"gunicorn.socket": object()}  # what a gunicorn worker adds to the environ

    def warnings() -> list[str]:
        return [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]

    with caplog.at_level("WARNING"):
        scrape(client)  # a single process (a test, a development server)
        assert warnings() == []
        for _ in range(3):
            assert (
                client.simulate_get("/metrics", headers=BEARER, extras=gunicorn).status_code == 200
            )
        (message,) = warnings()
    assert "PROMETHEUS_MULTIPROC_DIR is not set" in message
    assert METRICS_TOKEN not in message

    warn_unsummed.cache_clear()
    caplog.clear()
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    with caplog.at_level("WARNING"):
        assert client.simulate_get("/metrics", headers=BEARER, extras=gunicorn).status_code == 200
    assert warnings() == []


@pytest.fixture(autouse=True)
def _no_multiprocess_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)
    yield
