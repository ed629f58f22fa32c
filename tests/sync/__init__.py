"""Tests of ``newsletter_connector.sync``: the sync runner and its transports."""
