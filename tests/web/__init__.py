"""Tests of ``newsletter_connector.web``: the HTTP surfaces (Newsletter API, export, list
source, analytics capture, OpenAPI) through ``create_app`` and real servers."""
