"""The storage contract, one concern per module (records and protocols are imported from the
module that defines them):

- :mod:`.host`: what a host may supply, the subscriber repository;
- :mod:`.internal`, :mod:`.outbox`, :mod:`.analytics`, :mod:`.admin`: the product's own
  repositories, always the built-in tables;
- :mod:`.unit_of_work`: the unit of work and the backend;
- :mod:`.records`, :mod:`.outbox_records`, :mod:`.access_records`: the records;
- :mod:`.transport`: the outbound transport contract.

:mod:`newsletter_connector.testing` checks a backend, one repository at a time.
"""
