"""Testing aids: the ``newsletter_*`` fixtures of :mod:`.pytest_plugin` (auto-loaded by pytest)
and the storage conformance suite: :class:`StorageConformance` for a whole backend, and one
class per repository (:class:`SubscriberRepositoryConformance` for a host's subscriber store)."""

from .conformance import (
    ApiKeyConformance,
    ConnectionConformance,
    IssueRepositoryConformance,
    OutboxConformance,
    SettingsConformance,
    StorageConformance,
    UnitOfWorkConformance,
)
from .conformance_admin import AdminConformance
from .conformance_analytics import AnalyticsConformance
from .conformance_bulk_jobs import BulkJobConformance
from .conformance_feedback import FeedbackConformance
from .conformance_rate_limits import RateLimitConformance
from .conformance_subscribers import (
    ContactMessageConformance,
    DeletionConformance,
    SubscriberRepositoryConformance,
)

__all__ = [
    "AdminConformance",
    "AnalyticsConformance",
    "ApiKeyConformance",
    "BulkJobConformance",
    "ConnectionConformance",
    "ContactMessageConformance",
    "DeletionConformance",
    "FeedbackConformance",
    "IssueRepositoryConformance",
    "OutboxConformance",
    "RateLimitConformance",
    "SettingsConformance",
    "StorageConformance",
    "SubscriberRepositoryConformance",
    "UnitOfWorkConformance",
]
