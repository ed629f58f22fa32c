"""Bringing an existing list (docs/importing.md): one import, whether from the command line, the
admin's Import page or a host's own Python.

Each line obeys the rules of ``POST /subscribers`` (``add``) or of a contact change
(``update``), or is an opt-out (``suppress``, and any line its source marks as unsubscribed or
cleaned). An import never makes an unsubscribed, bounced or suppressed address mailable.

Lines are applied :data:`CHUNK` at a time, each chunk in one transaction with the events it
queues: a chunk is wholly stored or not at all. Every outcome depends only on what is stored, so
importing a file again changes nothing and queues nothing, and an import stopped half way and
started again finishes without a duplicate subscriber or event. A dry run decides every line the
same way and stores nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from itertools import islice
from typing import Any

from ...errors import ConsentRequired, InvalidRequest
from ...model.contact import contact_payload
from ...model.requests import MAX_CONSENT_SOURCE_LENGTH
from ...plugins.sql_store.store import SqlUnitOfWork
from ...plugins.sql_store.subscribers import SqlSubscribers
from ...storage.outbox_records import NewEvent
from ...storage.records import FeedbackKind, SubscriberData, SubscriberRecord
from ...storage.subscriber_batches import add_subscribers, subscribers_by_email
from ...timeutil import parse_timestamp
from ..context import ServiceContext
from ..events import new_subscriber_events, subscriber_key
from ..subscribers import STATUS_AFTER, SubscriberService, new_signup_data, stored_as_reported
from ._columns import (
    ColumnMap,
    dropped_opt_outs,
    header_names_fields,
    map_columns,
    plain_list,
)
from ._files import FileShape, ImportSource, inspect, is_listed_line
from ._lines import Blank, Line, Record, read_lines
from ._rows import ImportRow, Provenance, Refusal, RowReader

MODES = ("add", "update", "suppress")
#: Lines applied per transaction (bench: subscriber_import).
CHUNK = 500
#: Columns that give a line its consent time.
_CONSENT_TIME_COLUMNS = frozenset(("consent_collected_at", "confirmed_time", "optin_time"))
_CONFIRMED_SIGNUP = ("newsletter.signup", "newsletter.confirmed")
_PENDING_SIGNUP = ("newsletter.signup",)
#: What a line did (or, in a dry run, would do), in the order a report lists them.
ACTIONS = (
    "added",
    "added_pending",
    "added_suppressed",
    "updated",
    "unchanged",
    "unsubscribed",
    "bounced",
    "suppressed",
    "blank",
    "refused",
)
#: The action, in words.
ACTION_WORDS = {
    "added": "added, confirmed",
    "added_pending": "added, pending (the platform mails a confirmation)",
    "added_suppressed": "added as the platform reported it (unsubscribed or bounced)",
    "updated": "updated",
    "unchanged": "unchanged",
    "unsubscribed": "unsubscribed",
    "bounced": "marked bounced",
    "suppressed": "suppressed (no subscriber; kept from being added as mailable)",
    "blank": "blank, skipped",
    "refused": "refused",
}


@dataclass(frozen=True)
class ImportOptions:
    """How to import a file: ``mode`` (one of :data:`MODES`); ``pending``: lines without
    consent become pending subscribers (each mailed a confirmation) instead of being refused;
    ``provenance``: the consent of every line without its own; ``encoding`` and ``delimiter``
    (``None``: found from the file); ``columns``: what a column holds, by its header name,
    where matching by name is not wanted (``""``: nothing); ``opt_outs_dropped``: the owner
    confirmed that a column marking opt-outs is not read (see :func:`check_opt_out_columns`)."""

    mode: str = "add"
    pending: bool = False
    provenance: Provenance = field(default_factory=Provenance)
    encoding: str | None = None
    delimiter: str | None = None
    columns: Mapping[str, str] = field(default_factory=dict)
    opt_outs_dropped: bool = False

    def as_json(self) -> dict[str, Any]:
        """The options as JSON values (an import job stores them)."""
        return {
            "mode": self.mode,
            "pending": self.pending,
            "consent_source": self.provenance.source,
            "consent_collected_at": self.provenance.collected_at,
            "encoding": self.encoding,
            "delimiter": self.delimiter,
            "columns": dict(self.columns),
            "opt_outs_dropped": self.opt_outs_dropped,
        }

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> ImportOptions:
        """The options :meth:`as_json` gave (``{}``: the defaults)."""
        return cls(
            mode=value.get("mode", "add"),
            pending=bool(value.get("pending", False)),
            provenance=Provenance(value.get("consent_source"), value.get("consent_collected_at")),
            encoding=value.get("encoding"),
            delimiter=value.get("delimiter"),
            columns=dict(value.get("columns") or {}),
            opt_outs_dropped=bool(value.get("opt_outs_dropped", False)),
        )


@dataclass(frozen=True)
class LineOutcome:
    """What one line did: an action of :data:`ACTIONS`; for ``refused``, the field at fault
    (``None``: the line as a whole) and the reason. ``through`` is the last line it covers,
    when lines the CSV rules cannot read are refused together."""

    line: int
    action: str
    field: str | None = None
    reason: str | None = None
    through: int | None = None

    @property
    def lines(self) -> int:
        """How many lines of the file the outcome covers."""
        return 1 if self.through is None else self.through - self.line + 1


@dataclass(frozen=True)
class ImportPlan:
    """A file read and its columns matched, ready to import."""

    source: ImportSource
    shape: FileShape
    columns: ColumnMap
    options: ImportOptions


@dataclass(frozen=True)
class ImportChunk:
    """Up to :data:`CHUNK` lines read: the rows, the lines decided as they were read (blank,
    or refused), and the number of the chunk's last line."""

    rows: list[ImportRow]
    decided: list[LineOutcome]
    last_line: int
    #: The header's line (``0``: a plain list has none); lines up to it are not counted.
    header_line: int = 0


@dataclass
class ImportReport:
    """The totals of an import (or a dry run): how many lines did each action, how many
    lines were read (the header is not counted, so the actions' counts add up to it), the
    columns not imported and the ``attributes`` keys not imported."""

    dry_run: bool
    counts: Counter[str] = field(default_factory=Counter)
    lines_read: int = 0
    not_imported: tuple[str, ...] = ()
    unread_attributes: tuple[str, ...] = ()

    @property
    def mails(self) -> int:
        """Confirmation mails the platform sends (or would send) for the pending added."""
        return self.counts["added_pending"]

    @property
    def refused(self) -> int:
        """Lines refused."""
        return self.counts["refused"]


#: Called after each chunk with the last line read.
Progress = Callable[[int], None]
#: Called with each line's outcome, in line order.
OutcomeSink = Callable[[LineOutcome], None]


class SubscriberImportService:
    """``service.subscriber_import``."""

    def __init__(self, subscribers: SubscriberService) -> None:
        self.subscribers = subscribers
        self.context: ServiceContext = subscribers.context

    def plan(self, source: ImportSource, options: ImportOptions) -> ImportPlan:
        """Read ``source`` once and match its columns: nothing is stored.

        :raises InvalidRequest: naming ``mode``, ``file`` (too large, empty, no header naming
            the email column), ``encoding``, ``delimiter``, ``columns``, ``consent`` (see
            :func:`check_consent_options`) or ``confirm_opt_outs`` (see
            :func:`check_opt_out_columns`).
        """
        if options.mode not in MODES:
            raise InvalidRequest(f"mode must be one of {', '.join(MODES)}", field="mode")
        shape = inspect(
            source,
            max_bytes=self.context.settings.import_max_bytes,
            encoding=options.encoding,
            delimiter=options.delimiter,
        )
        header = shape.first_fields
        known = bool(options.columns) or header_names_fields(header)
        if not known and is_listed_line(shape.first_line):
            shape = replace(shape, delimiter=None)
            return self._checked(ImportPlan(source, shape, plain_list(), options))
        if any("@" in name for name in header):
            raise InvalidRequest(
                "the first line holds an address, so it is a reader, not a header; add a first "
                "line naming the columns (a plain list of one address per line needs none)",
                field="columns",
            )
        if not known:
            raise InvalidRequest(
                "the first line names no column this import knows and is not an address; "
                f"found {', '.join(repr(name[:40]) for name in header[:20])}. Name the "
                "column holding the email address",
                field="columns",
            )
        if shape.delimiter is None:
            shape = replace(shape, delimiter=",")  # a file of one column, with its header
        columns = map_columns(header, options.columns)
        return self._checked(ImportPlan(source, shape, columns, options))

    def _checked(self, plan: ImportPlan) -> ImportPlan:
        check_consent_options(plan.options, plan.columns, self.context.clock())
        check_opt_out_columns(plan.options, plan.columns)
        return plan

    def dry_run(
        self,
        plan: ImportPlan,
        *,
        on_line: OutcomeSink | None = None,
        progress: Progress | None = None,
    ) -> ImportReport:
        """What importing ``plan`` would do to each line, decided against what is stored now;
        nothing is stored and nothing queued."""
        return self._import(plan, dry_run=True, on_line=on_line, progress=progress)

    def run(
        self,
        plan: ImportPlan,
        *,
        on_line: OutcomeSink | None = None,
        progress: Progress | None = None,
    ) -> ImportReport:
        """Import ``plan``, a chunk of lines per transaction with the events they queue."""
        return self._import(plan, dry_run=False, on_line=on_line, progress=progress)

    def _import(
        self,
        plan: ImportPlan,
        *,
        dry_run: bool,
        on_line: OutcomeSink | None,
        progress: Progress | None,
    ) -> ImportReport:
        report = ImportReport(dry_run=dry_run, not_imported=plan.columns.not_imported)
        reader = self.reader(plan)
        chunks = ReadAhead(self.chunks(plan, reader))
        for chunk in chunks:
            with self.context.storage.transaction(write=not dry_run) as uow:
                outcomes = self.apply_chunk(
                    uow, chunk, plan.options, dry_run=dry_run, meanwhile=chunks.read_ahead
                )
            for outcome in outcomes:
                report.counts[outcome.action] += outcome.lines
                if on_line is not None:
                    on_line(outcome)
            report.lines_read = chunk.last_line - chunk.header_line
            if progress is not None:
                progress(chunk.last_line)
        report.unread_attributes = tuple(sorted(reader.unread_attributes))
        return report

    # -- chunks ---------------------------------------------------------------------------------

    @staticmethod
    def reader(plan: ImportPlan) -> RowReader:
        """What reads the lines of ``plan``'s file into rows."""
        options = plan.options
        return RowReader(plan.columns, options.mode, options.provenance, set())

    @staticmethod
    def chunks(plan: ImportPlan, reader: RowReader, after_line: int = 0) -> Iterator[ImportChunk]:
        """The file's lines after line ``after_line``, :data:`CHUNK` at a time, each read
        into a row, skipped as blank or refused: every line after the header is in one."""
        read = iter(read_lines(plan.source, plan.shape))
        header_line = 0
        if plan.columns.source != "plain":
            header_line = _header_line(read)
        while chunk := list(islice(read, CHUNK)):
            rows: list[ImportRow] = []
            decided: list[LineOutcome] = []
            for line in chunk:
                if line.line <= after_line:
                    continue
                if isinstance(line, Blank):
                    decided.append(LineOutcome(line.line, "blank"))
                elif not isinstance(line, Record):
                    decided.append(
                        LineOutcome(line.line, "refused", None, line.reason, line.through)
                    )
                elif isinstance(row := reader.read(line), Refusal):
                    decided.append(LineOutcome(row.line, "refused", row.field, row.reason))
                else:
                    rows.append(row)
            if rows or decided:
                yield ImportChunk(rows, decided, _last_line(chunk[-1]), header_line)

    def apply_chunk(
        self,
        uow: SqlUnitOfWork,
        chunk: ImportChunk,
        options: ImportOptions,
        *,
        dry_run: bool,
        meanwhile: Callable[[], None] | None = None,
    ) -> list[LineOutcome]:
        """Every line of ``chunk`` decided and (unless ``dry_run``) applied in ``uow``, with
        the events it queues; the outcomes in line order. ``meanwhile`` (which must not raise,
        such as :meth:`ReadAhead.read_ahead`) is called once, while the database stores the
        chunk's events if it can."""
        outcomes = list(chunk.decided)
        if chunk.rows:
            outcomes += _Chunk(self, uow, chunk.rows, options, dry_run=dry_run).apply(meanwhile)
        elif meanwhile is not None:
            meanwhile()
        outcomes.sort(key=lambda outcome: outcome.line)
        return outcomes


class ReadAhead(Iterator[ImportChunk]):
    """The chunks of :meth:`SubscriberImportService.chunks`, with the next one read on demand
    (:meth:`read_ahead`) while the database is still storing the last: reading a chunk is
    Python's work and storing one the server's, so the two overlap on two cores."""

    def __init__(self, chunks: Iterator[ImportChunk]) -> None:
        self._chunks = chunks
        self._ahead: list[ImportChunk] = []
        self._failure: Exception | None = None
        self._done = False

    def read_ahead(self) -> None:
        """Read the next chunk now, if it is not read yet; a failure to read it is raised when
        it is asked for, not here (the chunk being stored is not to fail with it)."""
        if self._ahead or self._done or self._failure is not None:
            return
        try:
            self._ahead.append(next(self._chunks))
        except StopIteration:
            self._done = True
        except Exception as failure:
            self._failure = failure

    def __next__(self) -> ImportChunk:
        self.read_ahead()
        if self._failure is not None:
            failure, self._failure = self._failure, None
            self._done = True
            raise failure
        if not self._ahead:
            raise StopIteration
        return self._ahead.pop()


class _Chunk:
    """One chunk's rows decided in line order, each against what is stored and what the
    chunk's earlier rows did, and written in the chunk's transaction (unless a dry run). New
    subscribers are inserted together, with their events, when the chunk ends or a later row
    needs one of them stored."""

    def __init__(
        self,
        service: SubscriberImportService,
        uow: SqlUnitOfWork,
        rows: list[ImportRow],
        options: ImportOptions,
        *,
        dry_run: bool,
    ) -> None:
        self.context = service.context
        self.subscribers = service.subscribers
        self.uow = uow
        self.rows = rows
        self.options = options
        self.dry_run = dry_run
        self.settings = self.context.settings
        self.now = self.context.clock()
        self.keys = {row.email: subscriber_key(self.context, row.email) for row in rows}
        self.lock = not dry_run and (options.mode != "add" or any(row.opted_out for row in rows))
        self.stored: dict[str, SubscriberData] = dict(
            subscribers_by_email(uow.subscribers, list(self.keys), lock=self.lock)
        )
        self.suppressions = uow.feedback.suppressions(list(self.keys.values()))
        #: Keyed hashes of the addresses suppressed, before the chunk or by it.
        self.suppressed = set(self.suppressions)
        #: New subscribers not inserted yet, with the events each queues and its line.
        self.new: dict[str, tuple[SubscriberData, tuple[str, ...], int]] = {}
        self.events: list[NewEvent] = []
        self.outcomes: dict[int, LineOutcome] = {}

    def apply(self, meanwhile: Callable[[], None] | None = None) -> list[LineOutcome]:
        for row in self.rows:
            self.outcomes[row.line] = self._decide(row)
        self._insert_new(read_back=False)
        if not self.dry_run:
            self.uow.outbox.enqueue_many(self.events, meanwhile=meanwhile)
        elif meanwhile is not None:
            meanwhile()
        return list(self.outcomes.values())

    def _decide(self, row: ImportRow) -> LineOutcome:
        if row.opted_out is not None or self.options.mode == "suppress":
            return self._opt_out(row, row.opted_out or "unsubscribe")
        if self.options.mode == "update":
            return self._update(row)
        return self._add(row)

    def _insert_new(self, *, read_back: bool = True) -> None:
        """Insert the new subscribers and queue their events; one that was signed up while the
        chunk ran is left as it is (its line: unchanged). ``read_back``: read them as stored,
        for a later line of the chunk to change."""
        if not self.new or self.dry_run:
            self.new.clear()
            return
        new = list(self.new.values())
        events: list[list[NewEvent]] = []

        def build_events() -> None:
            if not events:
                events.extend(self._events(types, data) for data, types, _ in new)

        repository = self.uow.subscribers
        rows = [data for data, _, _ in new]
        if isinstance(repository, SqlSubscribers):  # builds the events while the rows go in
            added = repository.add_many(rows, meanwhile=build_events)
        else:
            added = add_subscribers(repository, rows)
        build_events()
        for (data, _, line), queued in zip(new, events, strict=True):
            if data.email in added:
                self.events.extend(queued)
            else:
                self.outcomes[line] = LineOutcome(line, "unchanged")
        if read_back:
            stored = subscribers_by_email(self.uow.subscribers, list(self.new), lock=True)
            self.stored.update(stored)
        self.new.clear()

    def _add(self, row: ImportRow) -> LineOutcome:
        if row.email in self.stored:
            return LineOutcome(row.line, "unchanged")
        assert row.signup is not None
        if row.signup.consent is None and not self.options.pending:
            return _refused(
                row,
                "consent",
                "no record of where and when they agreed: give both in the line's columns or "
                "for the whole file, or import lines without consent as pending",
            )
        try:
            data = new_signup_data(row.signup, self.now)
            if row.change is not None:
                data = SubscriberService.apply_change(data, row.change)
        except ConsentRequired as exc:
            return _refused(row, "consent", exc.message)
        except InvalidRequest as exc:
            return _refused(row, exc.field, exc.message)
        suppression = self.suppressions.get(self.keys[row.email])
        events: tuple[str, ...] = ()
        if suppression is not None:
            data = stored_as_reported(data, suppression)
            action = "added_suppressed"
        elif data.status == "confirmed":
            events, action = _CONFIRMED_SIGNUP, "added"
        else:
            events, action = _PENDING_SIGNUP, "added_pending"
        self.stored[row.email] = data
        self.new[row.email] = (data, events, row.line)
        return LineOutcome(row.line, action)

    def _update(self, row: ImportRow) -> LineOutcome:
        current = self._current(row.email)
        if current is None:
            return _refused(
                row,
                "email",
                "no subscriber has this address (mode update changes existing readers only)",
            )
        try:
            assert row.change is not None
            changed = SubscriberService.apply_change(current, row.change)
        except InvalidRequest as exc:
            return _refused(row, exc.field, exc.message)
        if changed == current:
            return LineOutcome(row.line, "unchanged")
        changed = replace(changed, updated_at=self.now)
        self.stored[row.email] = changed
        if not self.dry_run:
            assert isinstance(changed, SubscriberRecord)
            self.uow.subscribers.save(changed)
        return LineOutcome(row.line, "updated")

    def _opt_out(self, row: ImportRow, kind: FeedbackKind) -> LineOutcome:
        status = STATUS_AFTER[kind]
        current = self._current(row.email)
        if current is None:
            return self._suppress(row, kind, status)
        if current.status == status or (kind == "bounce" and current.status == "unsubscribed"):
            return LineOutcome(row.line, "unchanged")
        if self.dry_run:
            current = replace(current, status=status)
        else:
            assert isinstance(current, SubscriberRecord)
            current = self.subscribers.set_status(self.uow, current, status)
        self.stored[row.email] = current
        return LineOutcome(row.line, status)

    def _suppress(self, row: ImportRow, kind: FeedbackKind, status: str) -> LineOutcome:
        """An address without a subscriber: kept from being added as mailable, and the
        platform told (an event carrying only the address and the status)."""
        key = self.keys[row.email]
        if key in self.suppressed:
            return LineOutcome(row.line, "unchanged")
        self.suppressed.add(key)
        if not self.dry_run:
            self.uow.feedback.suppress(email_hmac=key, kind=kind, occurred_at=self.now, at=self.now)
            payload = {"email": row.email, "status": status}
            event_types = (f"newsletter.{status}",)
            self.events.extend(new_subscriber_events(self.context, event_types, payload, key))
        return LineOutcome(row.line, "suppressed")

    def _current(self, email: str) -> SubscriberData | None:
        """The stored subscriber (one an earlier line added is inserted first)."""
        if email in self.new:
            self._insert_new()
        return self.stored.get(email)

    def _events(self, event_types: tuple[str, ...], data: SubscriberData) -> list[NewEvent]:
        """The events of ``event_types`` about the new subscriber ``data``."""
        if not event_types:
            return []
        payload = contact_payload(data, self.settings)
        return new_subscriber_events(self.context, event_types, payload, self.keys[data.email])


def _header_line(read: Iterator[Line]) -> int:
    """Take the header (and any blank lines before it) from ``read``: the header's line."""
    for line in read:
        if not isinstance(line, Blank):
            return _last_line(line)
    return 0


def _last_line(line: Line) -> int:
    return line.through if not isinstance(line, Record | Blank) else line.line


def _refused(row: ImportRow, field_name: str | None, reason: str) -> LineOutcome:
    return LineOutcome(row.line, "refused", field_name, reason)


def check_consent_options(options: ImportOptions, columns: ColumnMap, now: datetime) -> None:
    """Refuse, before any line is read, a file-wide provenance no line could use: one given
    in a mode other than ``add`` (as is ``pending``), a time that does not parse or is in the
    future, a source that is blank or too long, or one half given with no column to give the
    other half.

    :raises InvalidRequest: naming ``consent``, or ``mode``.
    """
    source, collected = options.provenance.source, options.provenance.collected_at
    if options.mode != "add" and (source or collected or options.pending):
        raise InvalidRequest(
            "consent and pending lines apply to mode add only; leave them out", field="mode"
        )
    if collected is not None:
        instant = parse_timestamp(collected)
        if instant is None:
            raise InvalidRequest(
                "the consent time must be an ISO-8601 timestamp with a time zone, such as "
                "2024-03-05T14:22:10Z",
                field="consent",
            )
        if instant > now:
            raise InvalidRequest("the consent time is in the future", field="consent")
    if source is not None and not (0 < len(source.strip()) <= MAX_CONSENT_SOURCE_LENGTH):
        raise InvalidRequest(
            f"the consent source must be 1 to {MAX_CONSENT_SOURCE_LENGTH} characters",
            field="consent",
        )
    read = {target for _name, target in columns.mapped}
    if source and not collected and not read & _CONSENT_TIME_COLUMNS:
        raise InvalidRequest(
            "give the time consent was collected too (no column holds it)", field="consent"
        )
    if collected and not source and "consent_source" not in read:
        raise InvalidRequest(
            "give where consent was collected too (no column holds it)", field="consent"
        )


def opt_outs_warning(columns: tuple[str, ...]) -> str:
    """What not reading ``columns`` (columns marking opt-outs) does, in words."""
    names = ", ".join(f"“{name}”" for name in columns)
    return (
        f"{names} {'marks' if len(columns) == 1 else 'mark'} the readers who unsubscribed, "
        "were blocklisted or bounced; not imported, those readers would be imported as "
        "subscribed although they opted out"
    )


def check_opt_out_columns(options: ImportOptions, columns: ColumnMap) -> None:
    """Refuse, before any line is read, to leave a column marking opt-outs unread (listmonk's
    ``status``, Mailchimp's ``UNSUB_TIME`` or ``CLEAN_TIME``) in mode ``add`` or ``update``
    unless ``options.opt_outs_dropped`` confirms it (mode ``suppress`` treats every line as an
    opt-out).

    :raises InvalidRequest: naming ``confirm_opt_outs``.
    """
    dropped = dropped_opt_outs(columns)
    if dropped and options.mode != "suppress" and not options.opt_outs_dropped:
        raise InvalidRequest(
            f"{opt_outs_warning(dropped)}. Import the column, or confirm that they are to be "
            "imported as subscribed",
            field="confirm_opt_outs",
        )


def iter_actions(report: ImportReport) -> Iterator[tuple[str, int]]:
    """``(action, count)`` of every action a report counted, in :data:`ACTIONS` order."""
    for action in ACTIONS:
        if report.counts[action]:
            yield action, report.counts[action]
