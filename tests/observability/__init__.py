"""Tests of ``newsletter_connector.observability``: logs, metrics and their redaction."""
