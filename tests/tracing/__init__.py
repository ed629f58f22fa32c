"""Tests of ``newsletter_connector.tracing`` and hook tracing."""
