"""Tests of ``newsletter_connector.storage``: the store contract every store (built-in or a host's) meets."""
