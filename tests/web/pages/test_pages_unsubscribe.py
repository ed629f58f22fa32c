"""The unsubscribe link: GET never changes anything; the button and RFC 8058 one-click do."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.pages_helpers import FORM, open_form, path_of, text_of
from tests.support.subscriber_helpers import events_of

ONE_CLICK = "List-Unsubscribe=One-Click"


@pytest.fixture
def contact(newsletter_service: Any) -> dict[str, Any]:
    record = newsletter_service.subscribers.subscribe({"email": "out@example.org"}).record
    record = newsletter_service.subscribers.confirm_by_token(record.confirm_token)
    return dict(newsletter_service.subscribers.contact(record))


def _status(service: Any) -> str:
    return str(service.subscribers.get("out@example.org").status)


def test_get_shows_one_button_and_changes_nothing(
    newsletter_client: Any, newsletter_service: Any, contact: dict[str, Any]
) -> None:
    path = path_of(contact["unsubscribe_url"])
    for _ in range(3):  # a link scanner, then the reader
        page = newsletter_client.simulate_get(path)
        assert page.status_code == 200
        assert page.text.count("<button") == 1
        assert "Unsubscribe" in text_of(page.text)
    assert newsletter_client.simulate_head(path).status_code == 200
    assert _status(newsletter_service) == "confirmed"
    assert events_of(newsletter_service, "newsletter.unsubscribed") == []


def test_the_button_unsubscribes_and_confirms_on_screen_idempotently(
    newsletter_client: Any, newsletter_service: Any, contact: dict[str, Any]
) -> None:
    path = path_of(contact["unsubscribe_url"])
    form = open_form(newsletter_client, path)
    done = form.post(newsletter_client, path, {})
    assert done.status_code == 200
    assert "You are unsubscribed" in text_of(done.text)
    assert _status(newsletter_service) == "unsubscribed"
    [event] = events_of(newsletter_service, "newsletter.unsubscribed")
    assert event["payload"]["status"] == "unsubscribed"
    again = form.post(newsletter_client, path, {})
    assert again.status_code == 200
    assert "already unsubscribed" in text_of(again.text)
    later = newsletter_client.simulate_get(path)
    assert "already unsubscribed" in text_of(later.text) and "<button" not in later.text
    assert len(events_of(newsletter_service, "newsletter.unsubscribed")) == 1


@pytest.mark.parametrize("variant", ["no token", "no cookie", "cross-site"])
def test_the_button_needs_a_valid_form_token(
    newsletter_client: Any, newsletter_service: Any, contact: dict[str, Any], variant: str
) -> None:
    path = path_of(contact["unsubscribe_url"])
    form = open_form(newsletter_client, path)
    if variant == "no token":
        result = form.post(newsletter_client, path, {}, with_token=False)
        assert result.status_code == 400
        assert result.text.count("<button") == 1  # asked again, with a fresh token
    elif variant == "no cookie":
        result = form.post(newsletter_client, path, {}, with_cookie=False)
        assert result.status_code == 400
    else:
        result = form.post(newsletter_client, path, {}, headers={"Origin": "https://x.example"})
        assert result.status_code == 403
    assert _status(newsletter_service) == "confirmed"


def _assert_one_click_answer(result: Any) -> None:
    assert result.status_code == 200
    assert "location" not in result.headers
    assert "set-cookie" not in result.headers
    assert result.cookies == {}


@pytest.mark.parametrize("status", ["pending", "confirmed"])
def test_rfc8058_one_click_urlencoded(
    newsletter_client: Any, newsletter_service: Any, contact: dict[str, Any], status: str
) -> None:
    if status == "pending":
        newsletter_service.subscribers.erase("out@example.org")
        record = newsletter_service.subscribers.subscribe({"email": "out@example.org"}).record
        contact = newsletter_service.subscribers.contact(record)
    path = path_of(contact["unsubscribe_url"])
    for _ in range(2):  # idempotent
        result = newsletter_client.simulate_post(path, body=ONE_CLICK, headers=FORM)
        _assert_one_click_answer(result)
        assert _status(newsletter_service) == "unsubscribed"
    assert len(events_of(newsletter_service, "newsletter.unsubscribed")) == 1


def test_rfc8058_one_click_multipart(
    newsletter_client: Any, newsletter_service: Any, contact: dict[str, Any]
) -> None:
    boundary = "----mailprovider"
    body = (
        f"--{boundary}\r\n"
        'Content-Disposition: form-data; name="List-Unsubscribe"\r\n\r\n'
        "One-Click\r\n"
        f"--{boundary}--\r\n"
    )
    result = newsletter_client.simulate_post(
        path_of(contact["unsubscribe_url"]),
        body=body,
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
    )
    _assert_one_click_answer(result)
    assert _status(newsletter_service) == "unsubscribed"


def test_one_click_from_a_mail_provider_needs_no_origin_or_token(
    newsletter_client: Any, newsletter_service: Any, contact: dict[str, Any]
) -> None:
    # Exactly the exempt request, whatever provenance headers come with it.
    result = newsletter_client.simulate_post(
        path_of(contact["unsubscribe_url"]),
        body=ONE_CLICK,
        headers={**FORM, "Origin": "https://mail.example", "Sec-Fetch-Site": "cross-site"},
    )
    _assert_one_click_answer(result)
    assert _status(newsletter_service) == "unsubscribed"


@pytest.mark.parametrize(
    "body",
    [
        "List-Unsubscribe=One-Click&extra=1",
        "List-Unsubscribe=one-click",
        "List-Unsubscribe=One-Click&List-Unsubscribe=One-Click",
        "List-Unsubscribe=",
        "",
    ],
)
def test_anything_but_the_exact_one_click_body_needs_the_form_token(
    newsletter_client: Any, newsletter_service: Any, contact: dict[str, Any], body: str
) -> None:
    result = newsletter_client.simulate_post(
        path_of(contact["unsubscribe_url"]), body=body, headers=FORM
    )
    assert result.status_code == 400
    assert _status(newsletter_service) == "confirmed"


def test_malformed_one_click_requests_are_refused_cleanly(
    newsletter_client: Any, newsletter_service: Any, contact: dict[str, Any]
) -> None:
    path = path_of(contact["unsubscribe_url"])
    broken = newsletter_client.simulate_post(
        path, body="garbage", headers={"Content-Type": "multipart/form-data; boundary=zzz"}
    )
    assert broken.status_code == 400
    assert "could not read what was sent" in text_of(broken.text)
    assert newsletter_client.simulate_post(path, body=ONE_CLICK).status_code == 415
    assert _status(newsletter_service) == "confirmed"


def test_unknown_token_is_404_for_every_method_and_sets_no_cookie(
    newsletter_client: Any, newsletter_service: Any, contact: dict[str, Any]
) -> None:
    path = "/unsubscribe/" + "Q" * 32
    get = newsletter_client.simulate_get(path)
    assert get.status_code == 404 and "recognise this link" in text_of(get.text)
    post = newsletter_client.simulate_post(path, body=ONE_CLICK, headers=FORM)
    assert post.status_code == 404 and "set-cookie" not in post.headers
    assert newsletter_client.simulate_head(path).status_code == 404
    assert _status(newsletter_service) == "confirmed"


def test_no_answer_from_the_unsubscribe_link_hands_out_the_profile_or_anything_personal(
    newsletter_client: Any, newsletter_service: Any
) -> None:
    # A forwarded newsletter carries this link: whoever follows it may not be the reader.
    record = newsletter_service.subscribers.subscribe(
        {"email": "Fwd.Reader@example.org", "first_name": "Zebulon", "phone": "217 555 0199"}
    ).record
    record = newsletter_service.subscribers.confirm_by_token(record.confirm_token)
    path = path_of(newsletter_service.subscribers.contact(record)["unsubscribe_url"])
    answers = [newsletter_client.simulate_get(path), newsletter_client.simulate_head(path)]
    form = open_form(newsletter_client, path)
    answers.append(form.post(newsletter_client, path, {}, with_token=False))  # asked again
    answers.append(form.post(newsletter_client, path, {}))  # done
    answers.append(form.post(newsletter_client, path, {}))  # already
    answers.append(newsletter_client.simulate_get(path))  # already, later
    answers.append(newsletter_client.simulate_post(path, body=ONE_CLICK, headers=FORM))
    assert [a.status_code for a in answers] == [200, 200, 400, 200, 200, 200, 200]
    for answer in answers:
        shown = answer.text + "".join(f"{k}: {v}" for k, v in answer.headers.items())
        for secret in (record.profile_token, record.confirm_token, "/profile/"):
            assert secret not in shown
        for personal in ("fwd.reader", "Zebulon", "0199"):
            assert personal.lower() not in shown.lower()
