"""The published storage contract: what a third party may implement, one concern per module
(records and protocols are imported from the module that defines them):

- :mod:`.host`: the subscriber repository, what a host's storage backend supplies, and
  :mod:`.subscriber_batches`, the two members it may add to take a chunk per statement;
- :mod:`.host_sql`: helpers for a host's own table (keyset walks, prefix ranges, day counts);
- :mod:`.transport`: the outbound transport;
- :mod:`.records`, :mod:`.outbox_records`, :mod:`.access_records`, :mod:`.subscriber_query`:
  the records and queries they take and return.

Everything else (keys, settings, issues, messages, analytics, admin users, audit, rate limits,
the outbox, jobs) is the built-in store's own tables, reached through the concrete classes of
:mod:`newsletter_connector.plugins.sql_store`. :mod:`newsletter_connector.testing` checks a
subscriber repository.
"""
