"""Tests of ``newsletter_connector.storage``: the contract every store, built-in or a
host's, meets."""
