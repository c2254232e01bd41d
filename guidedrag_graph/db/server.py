"""What a Neo4j server can do, from its version and edition: the features the queries depend on.

Version-dependent features are decided here, once, so the rest of the code asks
``ServerInfo.supports_*`` instead of comparing version strings (``db.server_info`` reads it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

_VERSION_RE = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


@dataclass(frozen=True)
class ServerInfo:
    """The server's version and edition, and the features that follow from them."""

    version: str
    edition: str

    @cached_property
    def version_tuple(self) -> tuple[int, int, int]:
        match = _VERSION_RE.match(self.version)
        if not match:
            return (0, 0, 0)
        return (int(match.group(1)), int(match.group(2)), int(match.group(3) or 0))

    @property
    def is_calver(self) -> bool:
        return self.version_tuple[0] >= 2025

    @property
    def supports_search_clause(self) -> bool:
        """Cypher 25 ``SEARCH ... IN (VECTOR INDEX ...)`` (2026.01+)."""
        return self.version_tuple >= (2026, 1, 0)

    @property
    def supports_search_in_filter(self) -> bool:
        """``WHERE c.id IN $ids`` inside SEARCH on a declared property (2026.06+)."""
        return self.version_tuple >= (2026, 6, 0)

    @property
    def supports_vector_quantization_option(self) -> bool:
        """``vector.quantization.type`` ('none' | 'scalar' | 'binary'), 2026.06+."""
        return self.version_tuple >= (2026, 6, 0)

    @property
    def supports_vector_quantization_enabled(self) -> bool:
        """The older boolean ``vector.quantization.enabled`` (5.23 up to 2026.05)."""
        return (5, 23, 0) <= self.version_tuple < (2026, 6, 0)

    @property
    def cypher_prefix(self) -> str:
        """Queries that need Cypher 25 features say so explicitly on CalVer servers."""
        return "CYPHER 25 " if self.is_calver else ""
