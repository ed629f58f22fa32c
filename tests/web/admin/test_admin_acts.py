"""Every admin act is a row of one table, and every row keeps the promises of an act: it is
reachable at its address (and its confirm step or form page answers GET), a post without the
form's token is refused with 403 changing nothing, and a done act is audited under the row's
action. The loop is over the table itself, so a new row is covered (and needs a sample here)."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from newsletter_connector.service.events import queue_event
from newsletter_connector.service.importing import ImportOptions, Provenance
from newsletter_connector.storage.subscriber_query import SubscriberFilter
from newsletter_connector.testing.issue_samples import sample_issue_content
from newsletter_connector.testing.subscriber_samples import make_subscriber_data
from newsletter_connector.web.admin import paths
from newsletter_connector.web.admin.act import ActResource
from newsletter_connector.web.admin.acts import ACTS
from newsletter_connector.web.admin.login import LoginPage
from newsletter_connector.web.app import create_app
from tests.support.admin import (
    COOKIE_NAME,
    PASSWORD,
    T0,
    audit_acts,
    csrf_token,
    get_page,
    post_form,
    post_upload,
    sign_in,
)

READER = "reader@example.org"
BOUNCED = "bounced@example.org"


def _subscriber(email: str) -> Callable[[Any], dict[str, str]]:
    def prepare(service: Any) -> dict[str, str]:
        with service.storage.transaction() as uow:
            uow.subscribers.add(make_subscriber_data(email))
        return {}

    return prepare


def _key(service: Any) -> dict[str, str]:
    return {"key_id": str(service.admin.create_api_key("to revoke").record.id)}


def _failed_batch(service: Any) -> dict[str, str]:
    with service.storage.transaction() as uow:
        queue_event(uow, service.context, "contact.message", {"n": 1})
    before = T0 - timedelta(minutes=5)
    with service.storage.transaction() as uow:
        [batch] = uow.outbox.claim_batches(
            now=before, lease_until=before + timedelta(minutes=1), batch_size=1, max_batches=1
        )
        uow.outbox.mark_failed(batch.id, error="HTTP 400", at=before)
    return {"batch_id": batch.id}


def _connection(service: Any) -> dict[str, str]:
    service.admin.set_connection(
        platform_base="https://mail.example.org", transport="platform", token="t" * 24
    )
    return {}


def _message(service: Any) -> dict[str, str]:
    record = service.messages.record(READER, None, "Hello")
    return {"message_id": str(record.id)}


def _handled_message(service: Any) -> dict[str, str]:
    fields = _message(service)
    service.messages.mark_handled(int(fields["message_id"]), by="ada")
    return fields


def _job(service: Any) -> dict[str, str]:
    job = service.subscriber_jobs.start(
        "bounce",
        SubscriberFilter(address_prefix="all"),
        filter_text="address=all",
        requested_by="ada",
        expected=1,
        expected_exact=True,
    )
    return {"job_id": str(job.id)}


def _upload(service: Any) -> dict[str, str]:
    job = service.import_jobs.upload(
        io.BytesIO(b"email\nimported@example.org\n"), file_name="list.csv", requested_by="ada"
    )
    return {"job": str(job.id)}


def _checked_upload(service: Any) -> dict[str, str]:
    fields = _upload(service)
    options = ImportOptions(provenance=Provenance("old list", "2024-01-01T00:00:00Z"))
    service.import_jobs.choose(int(fields["job"]), options)
    service.import_jobs.work()
    return fields


def _other_user(service: Any) -> dict[str, str]:
    service.admin_access.create_user("hopper", PASSWORD)
    return {}


@dataclass(frozen=True)
class Sample:
    """A post that does the act: its ``fields``, the state ``prepare`` sets up first (giving
    the values of the path's fields and of the form's fields it made), the ``status`` it
    answers and the query of the row's page (GET)."""

    fields: dict[str, str] = field(default_factory=dict)
    prepare: Callable[[Any], dict[str, str]] = lambda service: {}
    status: int = 303
    query: str = ""
    #: The file a row with ``upload_field`` posts (name, content), as a multipart form.
    upload: tuple[str, bytes] | None = None


SAMPLES = {
    paths.LOGOUT: Sample(),
    paths.API_KEYS: Sample({"label": "robot"}, status=200),
    paths.API_KEYS + "/{key_id}/revoke": Sample(prepare=_key),
    paths.SUBSCRIBER_UNSUBSCRIBE: Sample({"email": READER}, prepare=_subscriber(READER)),
    paths.SUBSCRIBER_BOUNCE: Sample({"email": BOUNCED}, prepare=_subscriber(BOUNCED)),
    paths.SUBSCRIBER_EDIT: Sample(
        {"email": READER, "first_name": "Ann"}, prepare=_subscriber(READER)
    ),
    paths.SUBSCRIBER_RESEND: Sample(
        {"email": "pending@example.org"}, prepare=_subscriber("pending@example.org")
    ),
    paths.SUBSCRIBER_ERASE: Sample({"email": READER}, query=f"email={READER}"),
    paths.SUBSCRIBERS_EXPORT: Sample(status=200),
    paths.MESSAGE_HANDLED: Sample(prepare=_message),
    paths.MESSAGE_UNHANDLED: Sample(prepare=_handled_message),
    paths.ISSUES_DIGEST: Sample({"kind": "test", "content": json.dumps(sample_issue_content())}),
    paths.SUBSCRIBERS_BULK: Sample(
        {"pick": "many1@example.org", "act": "unsubscribe"},
        prepare=_subscriber("many1@example.org"),
        status=200,
    ),
    paths.SUBSCRIBERS_BULK_UNSUBSCRIBE: Sample(
        {"pick": "many2@example.org"}, prepare=_subscriber("many2@example.org")
    ),
    paths.SUBSCRIBERS_BULK_BOUNCE: Sample(
        {"pick": "many3@example.org"}, prepare=_subscriber("many3@example.org")
    ),
    paths.SUBSCRIBERS_BULK_ERASE: Sample(
        {"pick": "many4@example.org", "confirm_count": "1"},
        prepare=_subscriber("many4@example.org"),
    ),
    paths.SUBSCRIBERS_EXPORT_SELECTED: Sample(
        {"pick": "many5@example.org"}, prepare=_subscriber("many5@example.org"), status=200
    ),
    paths.SUBSCRIBERS_ALL: Sample(
        {"filter": "address=all1", "act": "bounce"},
        prepare=_subscriber("all1@example.org"),
        status=200,
    ),
    **{
        f"{paths.SUBSCRIBERS_ALL}/{act}": Sample(
            {"filter": f"address=all{act}", "expected": "1", "confirm_count": "1"}
        )
        for act in ("unsubscribe", "bounce", "erase")
    },
    paths.SUBSCRIBER_JOB_STOP: Sample(prepare=_job),
    paths.IMPORT_UPLOAD: Sample(upload=("list.csv", b"email\nann@example.org\n")),
    paths.IMPORT_CHOOSE: Sample({"mode": "add", "without_consent": "pending"}, prepare=_upload),
    paths.IMPORT_START: Sample(prepare=_checked_upload),
    paths.IMPORT_STOP: Sample(prepare=_upload),
    paths.SUBSCRIBERS_EXPORT_MATCHING: Sample({"filter": "status=pending"}, status=200),
    paths.ISSUES_COMPOSE: Sample({"change": "add-topic"}, status=200),
    paths.ISSUES_COMPOSE_RECORD: Sample(
        {
            "record": "test",
            "briefing_title": "Clinics open late",
            "briefing_url": "https://news.example/clinics",
            "briefing_date": "2026-03-01",
        },
        status=200,
    ),
    paths.LISTSOURCE: Sample({"user": "platform", "key": "list-key-0123456789"}),
    paths.LISTSOURCE_OFF: Sample(),
    paths.OUTBOX_RETRY: Sample(),
    paths.OUTBOX_REPLAY: Sample(),
    paths.OUTBOX_FAILED_REPLAY: Sample(prepare=_failed_batch),
    paths.CONNECTION: Sample(
        {"platform_base": "https://mail.example.org", "transport": "events", "token": "t" * 24}
    ),
    paths.CONNECTION_DISABLE: Sample(),
    paths.CONNECTION_TEST: Sample(prepare=_connection),
    paths.ADMIN_USERS: Sample(
        {"username": "grace", "password": PASSWORD, "password_again": PASSWORD}
    ),
    paths.ADMIN_USER_DELETE: Sample(
        {"username": "hopper"}, prepare=_other_user, query="username=hopper"
    ),
    paths.ADMIN_USER_ROLE: Sample({"username": "hopper", "role": "editor"}, prepare=_other_user),
}


def _post(client: Any, address: str, fields: dict[str, str], sample: Sample, **options: Any) -> Any:
    if sample.upload is None:
        return post_form(client, address, fields, **options)
    return post_upload(client, address, fields, sample.upload, **options)


def test_every_act_has_one_address_and_a_sample() -> None:
    addresses = [act.path for act in ACTS]
    assert len(addresses) == len(set(addresses))
    assert set(addresses) == set(SAMPLES)


def _router_nodes(nodes: Any) -> Iterator[Any]:
    for node in nodes:
        yield node
        yield from _router_nodes(node.children)


def test_every_admin_form_but_the_login_posts_to_an_act(service: Any) -> None:
    app = create_app(service=service)
    posted = {
        node.uri_template: type(node.resource)
        for node in _router_nodes(app._router._roots)
        if node.resource is not None
        and hasattr(node.resource, "on_post")
        and node.uri_template.startswith(paths.ROOT + "/")
    }
    assert posted.pop(paths.LOGIN) is LoginPage
    assert posted == {act.path: ActResource for act in ACTS}


def test_every_act_is_reachable_refuses_a_post_without_its_token_and_is_audited(
    client: Any, service: Any, admin_user: str
) -> None:
    for act in ACTS:
        sample = SAMPLES[act.path]
        values = sample.prepare(service)
        address = act.path.format(**values)
        cookies = {COOKIE_NAME: sign_in(client, admin_user)}
        if act.page is not None:
            page = client.simulate_get(address, query_string=sample.query, cookies=cookies)
            assert page.status_code == 200, (address, page.text[:300])
        else:
            assert client.simulate_get(address, cookies=cookies).status_code == 405, address
        fields = {**sample.fields, **values}
        before = audit_acts(service)
        refused = _post(client, address, fields, sample, cookies=cookies)
        assert refused.status_code == 403 and "Form refused" in refused.text, address
        assert audit_acts(service) == before, address
        token = csrf_token(get_page(client, paths.HOME, cookies[COOKIE_NAME]))
        result = _post(client, address, {"csrf_token": token, **fields}, sample, cookies=cookies)
        assert result.status_code == sample.status, (address, result.text[:300])
        if act.audited:
            assert audit_acts(service)[0][0] == act.action, address
        else:  # it changes nothing
            assert audit_acts(service) == before, address
