"""``SqlStorage``: the built-in store on SQLAlchemy Core (SQLite, PostgreSQL, MySQL, MariaDB), and
``SqlUnitOfWork``, one transaction's repositories.

All work happens inside ``storage.transaction()``, a unit of work that commits on success and
rolls back on any exception. Every state change and the outbox events it causes are written in
one such transaction, the subscriber repository (the built-in one or a host's) included: it is
built on the unit of work's own connection. The store raises
:class:`~newsletter_connector.errors.DbUnavailable` when the database does not answer and
:class:`~newsletter_connector.errors.NotMigrated` when its schema is missing or old."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import date
from functools import cached_property, partial
from pathlib import Path

from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import URL, Connection, Engine

from ...descriptors import SubscriberStore
from ...errors import DbUnavailable, NotMigrated
from ...settings import BUILTIN_STORAGE_BACKEND, Settings
from ...short_reads import in_short_reads, short_reads
from ...storage.access_records import ApiKeyRecord, ConnectionRecord
from ...storage.host import SubscriberRepository
from ...storage.outbox_records import NewEvent
from ...storage.records import SubscriberData, SubscriberRecord
from ...tracing import tracer_for
from ...tracing.statements import trace_statements
from . import migrate
from .admin import SqlAdminAudit, SqlAdminSessions, SqlAdminUsers, SqlMessageHandling
from .analytics import SqlAnalytics, SqlJobRuns, SqlLlmUsage
from .bulk_jobs import SqlBulkJobs
from .day_rollups import SqlDayRollups
from .engine import (
    BEGIN_OPTION,
    DbTimeouts,
    behind_transaction_pooler,
    is_in_memory,
    make_engine,
    prepare_short_read_engine,
    short_read_engine,
)
from .failure_reason import failure_reason, is_lasting, masked_url
from .feedback import SqlFeedback
from .import_jobs import SqlImportJobs
from .issues import SqlIssues
from .jobs import SqlJobs
from .outbox import SqlOutbox
from .rate_limits import SqlRateLimits
from .reads import ReadAll, read_in_turn
from .repos import SqlApiKeys, SqlConnections, SqlSettings
from .subscribers import SqlContactMessages, SqlDeletions, SqlSubscribers
from .upserts import mysql_error_number

MIGRATE_HINT = "run `newsletter-connector db upgrade`"
#: The storage backend ``sql``: subscribers in the built-in store's own ``nc_subscribers`` table.
BUILTIN_SUBSCRIBERS = SubscriberStore(
    name=BUILTIN_STORAGE_BACKEND,
    description="the built-in SQL store's own subscribers table (SQLite or PostgreSQL)",
    factory=SqlSubscribers,
)


class SqlUnitOfWork:
    """One transaction on one connection; repositories are created on first use, the
    subscribers by the subscriber store's factory, on the same connection."""

    def __init__(
        self,
        connection: Connection,
        subscribers: Callable[[Connection], SubscriberRepository] = SqlSubscribers,
        read_all: ReadAll = read_in_turn,
    ) -> None:
        self.connection = connection
        self._subscribers = subscribers
        self._read_all = read_all

    @cached_property
    def keys(self) -> SqlApiKeys:
        return SqlApiKeys(self.connection)

    @cached_property
    def settings(self) -> SqlSettings:
        return SqlSettings(self.connection)

    @cached_property
    def connections(self) -> SqlConnections:
        return SqlConnections(self.connection)

    @cached_property
    def outbox(self) -> SqlOutbox:
        return SqlOutbox(self.connection)

    @cached_property
    def issues(self) -> SqlIssues:
        return SqlIssues(self.connection)

    @cached_property
    def subscribers(self) -> SubscriberRepository:
        return self._subscribers(self.connection)

    @cached_property
    def deletions(self) -> SqlDeletions:
        return SqlDeletions(self.connection)

    @cached_property
    def messages(self) -> SqlContactMessages:
        return SqlContactMessages(self.connection)

    @cached_property
    def feedback(self) -> SqlFeedback:
        return SqlFeedback(self.connection)

    @cached_property
    def analytics(self) -> SqlAnalytics:
        return SqlAnalytics(self.connection, self._read_all)

    @cached_property
    def llm_usage(self) -> SqlLlmUsage:
        return SqlLlmUsage(self.connection)

    @cached_property
    def jobs(self) -> SqlJobRuns:
        return SqlJobRuns(self.connection)

    @cached_property
    def day_rollups(self) -> SqlDayRollups:
        return SqlDayRollups(self.connection)

    @cached_property
    def rate_limits(self) -> SqlRateLimits:
        return SqlRateLimits(self.connection)

    @cached_property
    def admin_users(self) -> SqlAdminUsers:
        return SqlAdminUsers(self.connection)

    @cached_property
    def admin_sessions(self) -> SqlAdminSessions:
        return SqlAdminSessions(self.connection)

    @cached_property
    def admin_audit(self) -> SqlAdminAudit:
        return SqlAdminAudit(self.connection)

    @cached_property
    def message_handling(self) -> SqlMessageHandling:
        return SqlMessageHandling(self.connection)

    @cached_property
    def bulk_jobs(self) -> SqlBulkJobs:
        return SqlBulkJobs(self.connection)

    @cached_property
    def import_jobs(self) -> SqlImportJobs:
        return SqlImportJobs(self.connection)

    @cached_property
    def job_leases(self) -> SqlJobs:
        return SqlJobs(self.connection)


class SqlStorage:
    """Storage on a SQLAlchemy engine. Thread-safe; create one per process (after fork). Its
    one-call shortcuts run a unit of work; the ``sql`` backend is :class:`.BuiltinSqlStorage`,
    which answers some of them faster, with the same result.

    Subscribers live where the setting ``storage_backend`` says (the built-in table by default;
    a host's own through the ``newsletter_storage_backends`` hook): each unit of work builds its
    subscriber repository with the store's factory on its own connection, and
    :meth:`check_ready` and :meth:`migrate` include the store's own.
    """

    #: How a unit of work's analytics runs its statements: one after the other here.
    read_all: ReadAll = staticmethod(read_in_turn)

    def __init__(self, engine: Engine, subscriber_store: SubscriberStore | None = None) -> None:
        self.engine = engine
        self.subscriber_store = subscriber_store or BUILTIN_SUBSCRIBERS

    @property
    def builtin_subscribers(self) -> bool:
        """Whether subscribers are in the built-in table (which the fast paths write directly)."""
        return self.subscriber_store.factory is SqlSubscribers

    @classmethod
    def from_settings(
        cls, settings: Settings, *, subscriber_store: SubscriberStore | None = None
    ) -> SqlStorage:
        """The store on ``settings.database_url`` with the ``db_*_timeout`` bounds, subscribers
        in ``subscriber_store`` (default: the built-in table); with the ``tracing`` setting on,
        each of its statements is a span (:mod:`...tracing.statements`).

        :raises SettingsError: ``tracing`` is on without the OpenTelemetry API installed.
        """
        timeouts = DbTimeouts(
            connect=settings.db_connect_timeout,
            statement=settings.db_statement_timeout,
            lock=settings.db_lock_timeout,
            reply=settings.db_reply_timeout,
            short_reply=settings.db_short_reply_timeout,
        )
        engine = make_engine(
            settings.database_url, timeouts=timeouts, transaction_pooler=settings.db_pgbouncer
        )
        tracer = tracer_for(settings)
        if tracer is not None:
            trace_statements(engine, tracer)
            prepare_short_read_engine(engine, partial(trace_statements, tracer=tracer))
        return cls(engine, subscriber_store)

    @property
    def dialect(self) -> str:
        """``sqlite``, ``postgresql``, ``mysql`` or ``mariadb`` (as the URL names it)."""
        return self.engine.dialect.name

    def __repr__(self) -> str:
        return f"SqlStorage({masked_url(self.engine.url)!r})"

    @contextmanager
    def transaction(self, *, write: bool = True) -> Iterator[SqlUnitOfWork]:
        """Open a unit of work; commit when the block ends, roll back if it raises. ``write``
        false is read-only work, run with lighter locking."""
        engine = short_read_engine(self.engine) if in_short_reads() else self.engine
        with translated_errors(self.engine.url), engine.connect() as connection:
            if self.dialect == "sqlite":
                connection.execution_options(
                    **{BEGIN_OPTION: "BEGIN IMMEDIATE" if write else "BEGIN"}
                )
            elif not write and not behind_transaction_pooler(self.engine):
                # READ COMMITTED: a read transaction guarantees nothing autocommit does not.
                # Behind a transaction pooler each autocommit statement may run on another
                # server connection, so a session lock taken by one (a commit horizon's) could
                # be released on another: a real transaction keeps them on one.
                connection.execution_options(isolation_level="AUTOCOMMIT")
            with connection.begin():
                yield SqlUnitOfWork(connection, self.subscriber_store.factory, self.read_all)

    def find_active_api_key(self, key_digest: str) -> ApiKeyRecord | None:
        """``keys.find_active_by_digest`` in a read-only unit of work (every authenticated
        request asks; a revocation is seen by the very next one)."""
        with self.transaction(write=False) as uow:
            return uow.keys.find_active_by_digest(key_digest)

    def find_active_connection(self) -> ConnectionRecord | None:
        """``connections.active()`` in a read-only unit of work (every export request asks; a
        disabled or replaced connection is refused by the very next one)."""
        with self.transaction(write=False) as uow:
            return uow.connections.active()

    def record_api_key_use(self, key_id: int, *, on: date) -> None:
        """``keys.mark_used(key_id, on=on)`` in a unit of work of its own (authentication asks
        at most once a day per key and process)."""
        with self.transaction() as uow:
            uow.keys.mark_used(key_id, on=on)

    def add_subscriber(
        self,
        data: SubscriberData,
        events: Sequence[NewEvent],
        *,
        unless_suppressed: str | None = None,
    ) -> SubscriberRecord | None:
        """``subscribers.add(data)`` and, when it stored the subscriber, each event queued in
        order, all in one unit of work; ``None`` (nothing written) when the address is taken,
        or when ``feedback.suppression(unless_suppressed)`` exists."""
        with self.transaction() as uow:
            if unless_suppressed is not None and uow.feedback.suppression(unless_suppressed):
                return None
            record = uow.subscribers.add(data)
            if record is not None:
                for event in events:
                    uow.outbox.enqueue(**vars(event))
        return record

    def check_ready(self) -> None:
        """Raise ``NotMigrated`` (saying how to migrate) unless the schema is current, the
        subscriber store's own tables included, and ``DbUnavailable`` if the database does
        not answer."""
        url = self.engine.url
        database, plain_path = url.database, "uri" not in url.query
        if (
            self.dialect == "sqlite"
            and plain_path
            and not is_in_memory(url)
            and not Path(str(database)).exists()
        ):
            # Connecting would create the file, leaving an empty database behind (a ``file:``
            # URI names no plain path, so it is left to SQLite; ``:memory:`` names no file).
            if not Path(str(database)).parent.is_dir():  # nor could `db upgrade` create it
                reason = failure_reason(FileNotFoundError("no such database file"), url)
                raise DbUnavailable("the database is unavailable", reason=reason, lasting=True)
            raise NotMigrated(
                f"the database {database} does not exist; create it with "
                "`newsletter-connector db upgrade`"
            )
        try:
            with short_reads():
                current = migrate.current_revision(short_read_engine(self.engine))
        except (sa_exc.OperationalError, sa_exc.InterfaceError) as exc:
            raise translate_db_error(exc, self.engine.url) from exc
        head = migrate.head_revision()
        if current is None:
            raise NotMigrated(f"the database has no newsletter-connector schema; {MIGRATE_HINT}")
        if current != head:
            raise NotMigrated(
                f"the database schema is at revision {current}, this version needs {head}; "
                f"{MIGRATE_HINT}"
            )
        if self.subscriber_store.check_ready is not None:
            with translated_errors(self.engine.url):
                self.subscriber_store.check_ready(self.engine)

    def migrate(self) -> str:
        """The package's migrations, then the subscriber store's own (when it has any)."""
        try:
            before = migrate.current_revision(self.engine)
            migrate.upgrade(self.engine)
            if self.subscriber_store.migrate is not None:
                self.subscriber_store.migrate(self.engine)
        except (sa_exc.OperationalError, sa_exc.InterfaceError) as exc:
            raise translate_db_error(exc, self.engine.url) from exc
        head = migrate.head_revision()
        if before is None:
            return f"created (schema revision {head})"
        if before == head:
            return f"already current (schema revision {head})"
        return f"migrated from schema revision {before} to {head}"

    def close(self) -> None:
        """Release connections."""
        self.engine.dispose()


#: MySQL's and MariaDB's error for a table that is not there.
NO_SUCH_TABLE = 1146


@contextmanager
def translated_errors(url: URL) -> Iterator[None]:
    """Driver and pool failures inside the block raised as domain errors (``url``: the
    database's, for the operator's reason)."""
    try:
        yield
    except (sa_exc.OperationalError, sa_exc.InterfaceError, sa_exc.ProgrammingError) as exc:
        raise translate_db_error(exc, url) from exc
    except sa_exc.TimeoutError as exc:  # connection pool exhausted
        raise DbUnavailable(
            "the database did not answer in time", reason=failure_reason(exc, url)
        ) from exc


def translate_db_error(exc: Exception, url: URL) -> Exception:
    """A driver error as a domain error: a missing table is ``NotMigrated``, any other
    programming error (a bug) is returned unchanged, the rest is ``DbUnavailable`` carrying
    the operator's reason (the driver's words, ``url`` with its password masked)."""
    orig = getattr(exc, "orig", None)
    if (
        type(orig).__name__ == "UndefinedTable"
        or "no such table" in str(orig)
        or mysql_error_number(orig) == NO_SUCH_TABLE
    ):
        return NotMigrated(f"the database schema is missing or incomplete; {MIGRATE_HINT}")
    if isinstance(exc, sa_exc.ProgrammingError):
        return exc
    reason = failure_reason(exc, url)
    return DbUnavailable(
        "the database is unavailable; retry shortly", reason=reason, lasting=is_lasting(reason)
    )
