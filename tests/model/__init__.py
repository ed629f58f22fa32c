"""Tests of ``newsletter_connector.model`` and the encoding of its values on the wire."""
