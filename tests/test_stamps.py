"""Walk pages leave their timestamps as datetimes for orjson to write (issue 10): the bytes
are exactly those of the strings ``isoformat_z`` makes, on orjson's path and on the stdlib's.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from newsletter_connector import Settings
from newsletter_connector.model.analytics import event_wire
from newsletter_connector.model.contact import contact_payload
from newsletter_connector.storage import AnalyticsEventRecord
from newsletter_connector.testing.conformance_subscribers import make_subscriber_data
from newsletter_connector.timeutil import isoformat_z, utc_stamp
from newsletter_connector.web.fast_json import STDLIB_DUMPS, dumps

# Aware values one day inside the range, so converting them to UTC cannot overflow.
_naive = st.datetimes()
_aware = st.datetimes(
    min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.timezones()
)
_fixed_offsets = st.datetimes(
    min_value=datetime(1, 1, 2),
    max_value=datetime(9999, 12, 30),
    timezones=st.builds(
        timezone, st.timedeltas(min_value=timedelta(hours=-23), max_value=timedelta(hours=23))
    ),
)
_moments = _naive | _aware | _fixed_offsets


class LocalDateTime(datetime):
    """A datetime subclass whose ``isoformat`` differs from datetime's."""

    def isoformat(self, sep: str = "T", timespec: str = "auto") -> str:
        return "local:" + super().isoformat(sep, timespec)


def _reference(value: Any) -> bytes:
    return STDLIB_DUMPS(value).encode()


@given(_moments)
def test_a_stamp_is_written_as_isoformat_z_writes_it(moment: datetime) -> None:
    expected = _reference({"at": isoformat_z(moment)})
    assert dumps({"at": utc_stamp(moment)}, stamps=True) == expected
    assert dumps({"at": utc_stamp(moment)}, stamps=True, floats_alike=False) == expected


def test_a_datetime_subclass_is_stamped_with_its_string() -> None:
    moment = LocalDateTime(2026, 11, 21, 9, 30)
    assert utc_stamp(moment) == isoformat_z(moment) == "local:2026-11-21T09:30:00Z"


@pytest.mark.parametrize("floats_alike", [True, False])
def test_without_stamps_a_datetime_is_refused(floats_alike: bool) -> None:
    with pytest.raises(TypeError):
        dumps({"at": datetime(2026, 1, 1)}, floats_alike=floats_alike)


@pytest.mark.parametrize(
    "value", [datetime(2026, 1, 1, tzinfo=timezone.utc), LocalDateTime(2026, 1, 1), object()]
)
def test_the_stdlib_path_refuses_what_is_not_a_stamp(value: Any) -> None:
    with pytest.raises(TypeError):
        dumps({"at": value}, stamps=True, floats_alike=False)


_optional = st.none() | _moments
SETTINGS = Settings(base_url="https://news.example/newsletter")


@given(
    created=_moments,
    completed=_optional,
    confirmed=_optional,
    unsubscribed=_optional,
    status=st.sampled_from(["pending", "confirmed", "unsubscribed", "bounced"]),
)
def test_a_stamped_contact_writes_the_reference_bytes(
    created: datetime,
    completed: datetime | None,
    confirmed: datetime | None,
    unsubscribed: datetime | None,
    status: str,
) -> None:
    record = make_subscriber_data(
        "reader@example.org",
        status=status,
        created_at=created,
        profile_completed_at=completed,
        confirmed_at=confirmed,
        unsubscribed_at=unsubscribed,
    )
    stamped = contact_payload(record, SETTINGS, stamp=utc_stamp)
    assert dumps(stamped, stamps=True) == _reference(contact_payload(record, SETTINGS))


@given(_moments, st.none() | st.dictionaries(st.text(max_size=4), st.integers(), max_size=2))
def test_a_stamped_event_writes_the_reference_bytes(
    moment: datetime, props: dict[str, Any] | None
) -> None:
    event = AnalyticsEventRecord(7, moment, "pageview", "v", "s", "/", "", props, None)
    stamped = event_wire(event, stamp=utc_stamp)
    assert dumps(stamped, stamps=True) == _reference(event_wire(event))
