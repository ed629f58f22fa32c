"""Bringing an existing list (docs/importing.md): the one import behind the command line, the
admin's Import page and a host's own Python. Callers use the names below; the modules behind
them are the package's own, each with one job, each importing only the ones listed before it
(and the storage, the models and the service's shared parts below them):

- ``_files``: a file as it comes: its size, encoding, delimiter and first line, checked once;
- ``_lines``: its lines streamed, every one accounted for (records, blank lines, unreadable);
- ``_columns``: which column holds what (the API's names, listmonk, Mailchimp, a plain list);
- ``_rows``: one record as the request it stands for, or why it is refused;
- ``_words``: a refused line in an editor's words;
- ``_text``: an upload kept as UTF-8 text, given back in the bytes it arrived in;
- ``_importer``: a plan, a dry run and the import, a chunk of lines per transaction;
- ``_jobs``: uploads the sync runner checks and imports under a lease.
"""

from __future__ import annotations

from ._columns import (
    API_FIELDS,
    SOURCE_FIELDS,
    SOURCE_LABELS,
    TARGETS,
    ColumnMap,
    dropped_opt_outs,
    header_names_fields,
    opt_out_columns,
    suggested_targets,
)
from ._files import ENCODING_WORDS, FileShape, ImportSource, inspect
from ._importer import (
    ACTION_WORDS,
    ACTIONS,
    CHUNK,
    MODES,
    ImportOptions,
    ImportPlan,
    ImportReport,
    LineOutcome,
    OutcomeSink,
    Progress,
    SubscriberImportService,
    iter_actions,
    opt_outs_warning,
)
from ._jobs import ImportJobService
from ._jobs import progress as import_job_progress
from ._rows import Provenance
from ._words import FIELD_WORDS, refusal_words

__all__ = [
    "ACTIONS",
    "ACTION_WORDS",
    "API_FIELDS",
    "CHUNK",
    "ENCODING_WORDS",
    "FIELD_WORDS",
    "MODES",
    "SOURCE_FIELDS",
    "SOURCE_LABELS",
    "TARGETS",
    "ColumnMap",
    "FileShape",
    "ImportJobService",
    "ImportOptions",
    "ImportPlan",
    "ImportReport",
    "ImportSource",
    "LineOutcome",
    "OutcomeSink",
    "Progress",
    "Provenance",
    "SubscriberImportService",
    "dropped_opt_outs",
    "header_names_fields",
    "import_job_progress",
    "inspect",
    "iter_actions",
    "opt_out_columns",
    "opt_outs_warning",
    "refusal_words",
    "suggested_targets",
]
