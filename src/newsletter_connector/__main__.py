"""``python -m newsletter_connector`` runs the command line."""

from newsletter_connector.cli import main

main()
