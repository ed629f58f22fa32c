"""No admin input is answered with a server error (docs/security.md, "No 500 from any admin
input"): an owner, signed in through the real login, sends every admin page hostile query
parameters and path segments and every admin form hostile fields, and each request is answered
below 500: a page, a redirect or a refusal, which never reads as a server fault (its page
does not say "Something went wrong"). A refused form changes nothing stored.

Nothing here lists the admin area by hand, so a new page, parameter or form is covered as it
lands: the pages are the app's routes and the pages its links lead to, the forms are those the
crawled pages show (and the confirm steps their samples answer), every act of
:data:`~newsletter_connector.web.admin.acts.ACTS` is posted to with its sample of
``test_admin_acts.py`` (which each act must have) and the state its sample prepares, and the
parameters and field names are those the admin source reads by name.

Hostile means: huge and negative numbers, digits ``int`` refuses, impossible and extreme dates,
control characters, text of up to 10,000 characters, any unicode, percent-encoding that is not
UTF-8, repeated and empty parameters, and cursors of garbage base64.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from html.parser import HTMLParser
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

import falcon
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from newsletter_connector.descriptors import OWNER
from newsletter_connector.plugins.sql_store.tables import metadata
from newsletter_connector.testing.databases import empty_all_tables
from newsletter_connector.testing.issue_samples import sample_issue_content
from newsletter_connector.testing.pytest_plugin import TEST_BASE_URL
from newsletter_connector.web.admin.act import AdminAct
from newsletter_connector.web.admin.acts import ACTS
from newsletter_connector.web.admin.base import ERROR_WORDS
from newsletter_connector.web.admin.gate import COOKIE_NAME
from newsletter_connector.web.admin.paths import ROOT
from newsletter_connector.web.admin.subscriber_filter import FILTER_PARAMS
from newsletter_connector.web.admin.subscribers import PAGE_PARAMS
from tests.support.admin import PASSWORD, sign_in
from tests.support.examples import examples
from tests.support.pages_helpers import FORM, ORIGIN
from tests.support.paths import ROOT as REPOSITORY
from tests.web.admin.test_admin_acts import SAMPLES

pytestmark = pytest.mark.system  # generated cases

OWNER_NAME = "owner"
ADMIN_SOURCE = REPOSITORY / "src" / "newsletter_connector" / "web" / "admin"
#: Tables that a request may write whether or not its form is accepted: the session's last
#: use, rate-limit counters, and the analytics days a page keeps once they are settled.
WRITTEN_BY_ANY_REQUEST = frozenset(
    {"admin_sessions", "rate_limit_counters", "day_rollups", "job_runs"}
)
#: What only a server error's page says.
SERVER_ERROR_WORDS = ERROR_WORDS[500][0]
#: Pages the crawl reads at most, from the dashboard's links on.
MOST_PAGES = 80

# -- what the admin source reads by name ----------------------------------------------------------

_FIELD_READ = re.compile(r'(?:form\.(?:get|get_list|has)|posted_id)\(\s*(?:call,\s*)?f?"([^"]+)"')
_PARAM_READ = re.compile(r'get_param(?:_as_\w+)?\(\s*"([^"]+)"')
_FORMAT_FIELD = re.compile(r"\{[^}]*\}")
_DATE_LIKE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DIGITS = re.compile(r"[0-9]+")


def names_read(pattern: re.Pattern[str]) -> frozenset[str]:
    """The names the admin modules pass to a reading call matched by ``pattern`` (an f-string's
    placeholders read as 0: ``topic-{n}-label`` is ``topic-0-label``)."""
    return frozenset(
        _FORMAT_FIELD.sub("0", name)
        for path in sorted(ADMIN_SOURCE.glob("*.py"))
        for name in pattern.findall(path.read_text())
    )


#: Every query parameter an admin page reads: by name, and the list's filter and paging (read in
#: a loop over :data:`FILTER_PARAMS` and :data:`PAGE_PARAMS`); ``q``, ``page`` and ``limit`` are
#: read by none, but a visitor may well try them.
QUERY_PARAMS = sorted(
    names_read(_PARAM_READ) | set(FILTER_PARAMS) | set(PAGE_PARAMS) | {"q", "page", "limit"}
)
#: Every form field an admin act reads by name.
FIELDS_READ = sorted(names_read(_FIELD_READ))

# -- hostile values --------------------------------------------------------------------------------

EDGE_NUMBERS = [
    "0", "-0", "-1", "+1", " 7", "7 ", "1.5", "1e9", "0x10", "1_000", "²", "١٢", "٣",
    str(2**31), str(2**63 - 1), str(2**63), str(2**64), "9" * 21, "9" * 5000, "-" + "9" * 30,
]  # fmt: skip
#: Digits ``str.isdigit`` takes and ``int`` refuses, digits of another script, and more
#: digits than ``int`` converts from text.
ODD_DIGITS = ["²", "١٢", "9" * 5000]
EDGE_DATES = [
    "9999-12-31", "0000-00-00", "2026-02-30", "0001-01-01", "2026-13-01", "2026-00-10",
    "10000-01-01", "2026-1-1", "2024-02-29", "2026-02-29", "9999-12-31T23:59:59Z",
    "0001-01-01T00:00:00Z", "2026-03-01T25:61:61Z", "-2026-01-01",
]  # fmt: skip
NUMBERS = st.one_of(st.integers(-(2**70), 2**70).map(str), st.sampled_from(EDGE_NUMBERS))
DATES = st.one_of(st.sampled_from(EDGE_DATES), st.dates().map(date.isoformat))
CONTROL = st.tuples(
    st.text(max_size=8), st.characters(max_codepoint=0x1F) | st.just("\x7f"), st.text(max_size=8)
).map("".join)
LONG = st.tuples(st.text(min_size=1, max_size=3), st.integers(200, 10_000)).map(
    lambda unit_size: (unit_size[0] * unit_size[1])[: unit_size[1]]
)
CURSORS = st.one_of(
    st.binary(max_size=48).map(lambda raw: base64.urlsafe_b64encode(raw).decode()),
    st.binary(max_size=48).map(lambda raw: base64.b64encode(raw).decode().rstrip("=")),
    st.sampled_from(["=", "==", "AAAA", "!!!!", "e30", "bnVsbA", "eyJpZCI6LTF9", "x.y.z"]),
)
ADDRESSES = st.sampled_from(
    ["a@b", "@", "a@", "reader@example.org", "READER@EXAMPLE.ORG ", "x@xn--", "a" * 250 + "@b.c"]
)
HOSTILE = st.one_of(
    st.sampled_from(["", " ", *EDGE_NUMBERS, *EDGE_DATES]),
    NUMBERS,
    DATES,
    CONTROL,
    LONG,
    CURSORS,
    ADDRESSES,
    st.text(max_size=30),
)
#: Pieces of a query string or form body as they travel: percent-encoding that is not UTF-8,
#: a stray ``%``, separators alone.
RAW_PIECES = st.sampled_from(
    ["%FF", "%C3%28", "%ED%A0%80", "%F4%90%80%80", "%", "%Z1", "%%", "&", "=", "==", ";", "+"]
)

# -- the admin area as the crawl finds it ----------------------------------------------------------


@dataclass
class Form:
    """A form a page shows: its fields, each with the values the page offers."""

    action: str
    fields: dict[str, list[str]] = field(default_factory=dict)


class _Forms(HTMLParser):
    """The forms of a page (a button's ``formaction`` is a form of its own) and the app's
    addresses that the page links to."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[Form] = []
        #: The forms sent by GET: their fields are query parameters.
        self.searches: list[Form] = []
        self.links: list[str] = []
        self._form: Form | None = None
        self._select: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {name: value or "" for name, value in attrs}
        if tag == "a" and a.get("href", "").startswith(TEST_BASE_URL):
            self.links.append(a["href"].removeprefix(TEST_BASE_URL))
        elif tag == "form":
            self._form = Form(app_path(a.get("action", "")))
            post = a.get("method", "get").lower() == "post"
            (self.forms if post else self.searches).append(self._form)
        elif self._form is not None and tag in ("input", "textarea", "select", "button", "option"):
            name = self._select if tag == "option" else a.get("name")
            if name:
                self._form.fields.setdefault(name, []).append(a.get("value", ""))
            if tag == "select":
                self._select = a.get("name")
            if tag == "button" and a.get("formaction"):
                self.forms.append(Form(app_path(a["formaction"]), self._form.fields))

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._form = None
        elif tag == "select":
            self._select = None


def app_path(url: str) -> str:
    """The app path of one of the app's own addresses (no query)."""
    return urlsplit(url.removeprefix(TEST_BASE_URL)).path


@dataclass
class AdminArea:
    """The admin area after :func:`seed`: the owner's session and form token, the route
    templates answering GET, the pages the crawl read (with their queries), the fields of each
    act's forms (by the act's route template), every value the forms offered and the values
    each query parameter was seen with."""

    session: str
    token: str
    page_routes: list[str]
    pages: list[str]
    act_fields: dict[str, dict[str, list[str]]]
    offered: list[str]
    #: The values the crawled addresses and search forms gave each query parameter.
    query_values: dict[str, list[str]]
    #: Whether an accepted act may have changed what :func:`seed` stored.
    dirty: bool = False


def _router_nodes(nodes: Any) -> Any:
    for node in nodes:
        yield node
        yield from _router_nodes(node.children)


def admin_routes(app: falcon.App[Any, Any]) -> dict[str, Any]:
    """Every admin route template of ``app`` with its resource."""
    return {
        node.uri_template: node.resource
        for node in _router_nodes(app._router._roots)
        if node.resource is not None and node.uri_template.startswith(ROOT)
    }


def route_of(app: falcon.App[Any, Any], path: str) -> str | None:
    """The route template serving ``path`` (``None``: no route)."""
    found = app._router.find(path)
    return found[3] if found else None


def seed(client: Any, service: Any) -> tuple[str, str]:
    """Empty the database, store an owner and what every act's sample prepares (a subscriber
    of each kind, messages, an issue, jobs, imports, a failed batch, a key, another admin, a
    connection), then sign the owner in: the session and the forms' token."""
    empty_all_tables(service.storage.engine)
    service.admin_access.create_user(OWNER_NAME, PASSWORD, role=OWNER)
    prepared = set()
    for act in ACTS:
        sample = SAMPLES[act.path]
        # A subscriber's sample stores the address it acts on; the others, one kind each.
        key = (sample.prepare.__qualname__, sample.fields.get("email", sample.fields.get("pick")))
        if key not in prepared:
            prepared.add(key)
            sample.prepare(service)
    service.issues.run_digest("test", content=sample_issue_content())
    service.admin.set_listsource_credentials("platform", "list-key-0123456789")
    session = sign_in(client, OWNER_NAME)
    return session, service.admin_access.session(session).csrf_token


def crawl(client: Any, service: Any, app: falcon.App[Any, Any]) -> AdminArea:
    """Seed, then read every admin page the dashboard's links lead to (and every route
    answering GET, its fields filled with 1: every stored kind's first id) and the answers
    of the acts whose sample answers a page; collect their forms."""
    session, token = seed(client, service)
    routes = admin_routes(app)
    page_routes = sorted(t for t, r in routes.items() if hasattr(r, "on_get"))
    queue = [ROOT + "/", *(_FORMAT_FIELD.sub("1", template) for template in page_routes)]
    queue += [
        _FORMAT_FIELD.sub("1", act.path) + "?" + SAMPLES[act.path].query
        for act in ACTS
        if act.page is not None
    ]
    seen: set[str] = set()
    forms: list[Form] = []
    query_values: dict[str, list[str]] = {}
    while queue and len(seen) < MOST_PAGES:
        address = queue.pop(0)
        if address in seen or app_path(address) == "/admin/logout":
            continue
        seen.add(address)
        path, _, query = address.partition("?")
        page = client.simulate_get(path, query_string=query, cookies={COOKIE_NAME: session})
        parsed = _parse(page.text)
        forms += parsed.forms
        for name, value in parse_qsl(query, keep_blank_values=True):
            query_values.setdefault(name, []).append(value)
        for search in parsed.searches:
            for name, values in search.fields.items():
                query_values.setdefault(name, []).extend(values)
        queue += [link for link in parsed.links if app_path(link).startswith(ROOT)]
    act_fields = _by_act(app, forms)
    for act in ACTS:  # the pages these answer: once for each choice their form offers
        sample = SAMPLES[act.path]
        if sample.status != 200 or sample.upload is not None or "{" in act.path:
            continue
        choices = [
            (name, value)
            for name, values in act_fields.get(act.path, {}).items()
            if len(set(values)) > 1
            for value in sorted(set(values))
        ]
        for name, value in choices or [("", "")]:
            fields = {**sample.fields, name: value} if name else sample.fields
            answer = _post(client, act.path, session, token, list(fields.items()))
            forms += _parse(answer.text).forms
    act_fields = _by_act(app, forms)
    offered = sorted({v for fields in act_fields.values() for vs in fields.values() for v in vs})
    session, token = seed(client, service)  # the samples posted may have changed the seed
    return AdminArea(session, token, page_routes, sorted(seen), act_fields, offered, query_values)


def _by_act(app: falcon.App[Any, Any], forms: list[Form]) -> dict[str, dict[str, list[str]]]:
    """The fields of ``forms`` by the route template of the act they post to."""
    act_fields: dict[str, dict[str, list[str]]] = {}
    for form in forms:
        template = route_of(app, form.action)
        if template is not None:
            fields = act_fields.setdefault(template, {})
            for name, values in form.fields.items():
                fields.setdefault(name, []).extend(values)
    return act_fields


def _parse(html: str) -> _Forms:
    parser = _Forms()
    parser.feed(html)
    return parser


#: The first test's crawl: :func:`seed` stores the same rows with the same ids every time, so
#: later tests read the same pages and forms and only need a session of their own.
_CRAWLED: list[AdminArea] = []


def area_of(client: Any, service: Any) -> AdminArea:
    """The crawled admin area, crawled once per module and seeded once per test (examples
    reuse it), seeded again after an example whose act was accepted: every example starts
    from the same stored state."""
    area: AdminArea | None = getattr(client, "_admin_area", None)
    if area is None:
        if not _CRAWLED:
            _CRAWLED.append(crawl(client, service, client.app))
            area = _CRAWLED[0]
        else:
            session, token = seed(client, service)
            area = replace(_CRAWLED[0], session=session, token=token, dirty=False)
        client._admin_area = area
    elif area.dirty:
        area.session, area.token = seed(client, service)
        area.dirty = False
    return area


# -- requests --------------------------------------------------------------------------------------


def _post(
    client: Any,
    path: str,
    session: str,
    token: str,
    pairs: list[tuple[str, str]],
    raw: Sequence[str] = (),
) -> Any:
    body = "&".join([urlencode([("csrf_token", token), *pairs]), *raw])
    return client.simulate_post(
        path, body=body, headers={**FORM, "Origin": ORIGIN}, cookies={COOKIE_NAME: session}
    )


def _post_upload(
    client: Any, path: str, session: str, token: str, pairs: list[tuple[str, str]], file: Any
) -> Any:
    boundary = "fuzz-boundary-5d1e"
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{quote(name)}"\r\n\r\n'.encode()
        + value.encode()
        + b"\r\n"
        for name, value in [("csrf_token", token), *pairs]
    ]
    name, content = file
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
        f'filename="{quote(name)}"\r\nContent-Type: text/csv\r\n\r\n'
    )
    body = b"".join(parts) + head.encode() + content + f"\r\n--{boundary}--\r\n".encode()
    headers = {"Content-Type": f"multipart/form-data; boundary={boundary}", "Origin": ORIGIN}
    return client.simulate_post(path, body=body, headers=headers, cookies={COOKIE_NAME: session})


def stored(service: Any) -> dict[str, list[str]]:
    """Every row of every table a refused form must leave alone."""
    with service.storage.engine.connect() as connection:
        return {
            table.name: sorted(repr(tuple(row)) for row in connection.execute(select(table)))
            for table in metadata.sorted_tables
            if table.name not in WRITTEN_BY_ANY_REQUEST
        }


def below_500(result: Any, caplog: Any, what: str) -> None:
    """``result`` is no server error, and a refusal does not read as one."""
    assert result.status_code < 500, f"{what} -> {result.status_code}\n{caplog.text[-4000:]}"
    if result.status_code >= 400:
        assert SERVER_ERROR_WORDS not in result.text, f"{what} -> {result.status_code}"


FUZZ = settings(
    max_examples=examples(300),
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)


def _value(data: Any, area: AdminArea, shown: Sequence[str] = ()) -> str:
    """A hostile value, most often of the kind ``shown`` (the values the page offered for the
    field) holds: a number for a number, a date for a date; else any, or one offered anywhere;
    or one of ``shown`` made hostile in part (:func:`_near`)."""
    if shown and data.draw(st.integers(0, 3)) == 0:
        return _near(data, data.draw(st.sampled_from(shown)))
    if any(value.isascii() and value.isdigit() for value in shown):
        kinds = [st.sampled_from(ODD_DIGITS), st.sampled_from(EDGE_NUMBERS), NUMBERS, HOSTILE]
    elif any(_DATE_LIKE.match(value) for value in shown):
        kinds = [st.sampled_from(EDGE_DATES), DATES, HOSTILE]
    else:
        kinds = [HOSTILE, st.sampled_from(area.offered)]
    return str(data.draw(st.one_of(kinds)))


def _parsed(value: str) -> bool:
    return bool(value) and (value.isdigit() or _DATE_LIKE.match(value) is not None)


def _near(data: Any, value: str) -> str:
    """``value`` with a hostile part: a number of its digits swapped, a piece added or cut."""
    how = data.draw(st.sampled_from(["digits", "append", "prepend", "cut"]))
    if how == "digits":
        edge = data.draw(st.sampled_from(EDGE_NUMBERS))
        return _DIGITS.sub(lambda _: edge, value, count=1) if _DIGITS.search(value) else edge
    piece = data.draw(HOSTILE)
    if how == "append":
        return value + piece
    if how == "prepend":
        return piece + value
    return value[: data.draw(st.integers(0, len(value)))]


def _segment(data: Any, area: AdminArea) -> str:
    """A path segment: ``1`` (every stored kind's first id) or a hostile one."""
    value = data.draw(st.just("1") | HOSTILE.filter(lambda v: v not in ("", ".", "..")))
    return quote(value, safe="")


def _query(data: Any, area: AdminArea, names: list[str]) -> str:
    """A query string of up to six pieces: a parameter (one of ``names`` or any) with a
    hostile value, a raw piece, a name alone, or a name with a raw value."""
    pieces = []
    for _ in range(data.draw(st.integers(0, 6))):
        kind = data.draw(st.sampled_from(["pair", "pair", "pair", "raw", "name", "raw-value"]))
        name = data.draw(st.sampled_from(names) | st.text(max_size=12))
        if kind == "pair":
            shown = area.query_values.get(name, [])
            value = data.draw(CURSORS) if name == "cursor" else _value(data, area, shown)
            pieces.append(urlencode([(name, value)]))
        elif kind == "raw":
            pieces.append(data.draw(RAW_PIECES))
        elif kind == "name":
            pieces.append(quote(name, safe=""))
        else:
            pieces.append(quote(name, safe="") + "=" + data.draw(RAW_PIECES))
    return "&".join(pieces)


# -- the tests -------------------------------------------------------------------------------------


def test_every_act_has_a_form_the_crawl_found(client: Any, service: Any) -> None:
    """The crawl reaches every act's form, so each is posted to with the fields its page
    shows (a new act's form needs its sample's state to be on a page the links reach)."""
    area = area_of(client, service)
    assert {act.path for act in ACTS} <= set(area.act_fields)
    assert "email" in FIELDS_READ and "before" in QUERY_PARAMS and "cursor" in QUERY_PARAMS


@FUZZ
@given(data=st.data())
def test_any_query_of_any_admin_page_is_answered_below_500(
    client: Any, service: Any, caplog: Any, data: Any
) -> None:
    area = area_of(client, service)
    if data.draw(st.booleans()):
        path, _, query = data.draw(st.sampled_from(area.pages)).partition("?")
    else:
        template = data.draw(st.sampled_from(area.page_routes))
        path = _FORMAT_FIELD.sub(lambda _: _segment(data, area), template)
        query = ""
    mutated = _query(data, area, QUERY_PARAMS)
    query = data.draw(st.sampled_from([mutated, f"{query}&{mutated}", f"{mutated}&{query}"]))
    result = client.simulate_get(path, query_string=query, cookies={COOKIE_NAME: area.session})
    below_500(result, caplog, f"GET {path}?{query}")


#: Examples of each act's form: every act gets its own, whatever the others do.
FORMS = settings(FUZZ, max_examples=examples(12))


@pytest.mark.parametrize("act", ACTS, ids=[act.path.removeprefix(ROOT + "/") for act in ACTS])
@FORMS
@given(data=st.data())
def test_any_form_to_an_admin_act_is_answered_below_500_and_a_refused_one_changes_nothing(
    client: Any, service: Any, caplog: Any, act: AdminAct, data: Any
) -> None:
    _post_hostile_form(client, service, caplog, data, area_of(client, service), act)


def _post_hostile_form(
    client: Any, service: Any, caplog: Any, data: Any, area: AdminArea, act: AdminAct
) -> None:
    """Post ``act``'s form as shown but for up to three fields (of the form's, or any the
    source reads) made hostile, left out or given twice, and now and then a field it does not
    have or a raw piece of body; below 500, and nothing changed when refused."""
    sample = SAMPLES[act.path]
    path = _FORMAT_FIELD.sub(lambda _: _segment(data, area), act.path)
    shown = area.act_fields.get(act.path, {})
    fields = {name: list(values) for name, values in shown.items() if name != "csrf_token"}
    for name, value in sample.fields.items():
        fields.setdefault(name, []).insert(0, value)
    # Fields holding a number or a date are the ones parsed: they are changed most often.
    parsed = sorted(name for name, values in fields.items() if any(map(_parsed, values)))
    names = [st.sampled_from(FIELDS_READ)]
    names += [st.sampled_from(sorted(fields))] if fields else []
    names += [st.sampled_from(parsed)] * 2 if parsed else []
    changed = data.draw(st.lists(st.one_of(names), min_size=1, max_size=3))
    pairs = [(name, values[0]) for name, values in fields.items() if name not in changed]
    for name in dict.fromkeys(changed):
        values = fields.get(name, [])
        how = data.draw(st.sampled_from(["hostile", "hostile", "left out", "twice"]))
        if how == "hostile":
            pairs.append((name, _value(data, area, values)))
        elif how == "twice":
            pairs += [(name, _value(data, area, values)), (name, _value(data, area, values))]
    if data.draw(st.integers(0, 4)) == 0:
        pairs.append((data.draw(st.text(max_size=12)), _value(data, area)))
    raw = data.draw(st.lists(RAW_PIECES, max_size=2)) if data.draw(st.integers(0, 4)) == 0 else []
    before = stored(service)
    if act.upload_field is None:
        result = _post(client, path, area.session, area.token, pairs, raw)
    else:
        name = data.draw(st.sampled_from(["list.csv", ""]) | st.text(max_size=40))
        content = data.draw(
            st.binary(max_size=200)
            | st.lists(st.text(max_size=40), max_size=8).map(lambda ls: "\n".join(ls).encode())
            | st.sampled_from([b"email\nann@example.org\n", b"\xff\xfe\x00", b"email;" * 3000])
        )
        result = _post_upload(client, path, area.session, area.token, pairs, (name, content))
    below_500(result, caplog, f"POST {path} {pairs!r} {raw!r}"[:3000])
    if result.status_code >= 400:
        assert stored(service) == before, f"POST {path} {pairs!r} refused but changed"
    else:
        area.dirty = True
