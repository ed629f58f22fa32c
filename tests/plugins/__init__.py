"""Tests of ``newsletter_connector.plugins`` and the plugin machinery: hooks, blocking,
the built-in renderer."""
