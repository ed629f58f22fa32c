"""The SQL store's speed paths: modules that exist only to answer faster than the plain store
(:class:`~newsletter_connector.plugins.sql_store.store.SqlStorage`), with the same results.
Each module's docstring names the benchmark that justifies it (``bench: ...``, see
docs/contributing/benchmarks.md). The subscriber conformance suite runs the signup with them
(:class:`~newsletter_connector.plugins.sql_store.builtin.BuiltinSqlStorage`) and without (a
host's store), and the store's own tests check the key check both ways, so each is a tested
twin of the plain path.
"""
