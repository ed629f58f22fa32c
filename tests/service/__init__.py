"""Tests of ``newsletter_connector.service``: the operations behind the surfaces."""
