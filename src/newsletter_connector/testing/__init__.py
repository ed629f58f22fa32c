"""Testing aids: the ``newsletter_*`` fixtures of :mod:`.pytest_plugin` (auto-loaded by pytest)
and the conformance suite of the published storage contract,
:class:`SubscriberRepositoryConformance`, which a host's subscriber store passes."""

from .conformance_subscribers import SubscriberRepositoryConformance

__all__ = ["SubscriberRepositoryConformance"]
