"""WSGI entry point for running newsletter-connector on its own under gunicorn.

Settings come from NEWSLETTER_* environment variables (or the TOML file named by
NEWSLETTER_CONFIG). gunicorn imports this module in each worker, after fork, so every worker
opens its own database connections.
"""

from newsletter_connector import create_app

app = create_app()
