"""The migration files themselves: found, parsed and rendered for a mapping, never applied here.

``migration/run.py`` decides what to run and runs it; this module only answers what a file says (its
version, the server it requires, its statements for a schema mapping and names, the objects they
create), so status, planning and the packaging test read files the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from guidedrag_graph.config import Settings
from guidedrag_graph.db.connection import ServerInfo
from guidedrag_graph.errors import ConfigurationError, MigrationError
from guidedrag_graph.resources import migrations_dir
from guidedrag_graph.schema.presets import PRESETS, SchemaMapping
from guidedrag_graph.templates import queries as templates

_FILE_RE = re.compile(r"^V(\d{4})__([A-Za-z0-9_]+)\.cypher$")

_REQUIRES_RE = re.compile(r"^//\s*requires:\s*neo4j\s*(>=|<)\s*([\d.]+)\s*$", re.MULTILINE)

_OBJECT_RE = re.compile(
    r"^\s*CREATE\s+(?:\w+\s+)?(INDEX|CONSTRAINT)\s+(`(?:[^`]|``)+`|\w+)", re.IGNORECASE
)

# Name slots set by a setting of their own; every other one is "<index_prefix>_<what>".
SETTING_NAMES = {
    "vector_index": "vector_index_name",
    "entity_fulltext_index": "entity_fulltext_index_name",
    "entity_vector_index": "entity_vector_index_name",
}

_DEFAULT_PREFIX = "guidedrag"

# version -> (sha256 of the file text as released before the files became two-way templates,
# canonical checksum of the converted file): databases migrated then recorded the first.
_RELEASED = {
    1: (
        "1f3faecf094c59368ec2c7318762de14d0bf553f8fe6f3e53b42bf021c943afd",
        "4cb2a83a05690347217bdd3af9e207b2b9dab1b89b7d5eeec2862cf24abf5dea",
    ),
    2: (
        "cdfb9742762d9320a7256cb0e698080408a7d6d42140c79a67d0342178c96499",
        "d508e03ce4dc7dd57beff41efcfd465829fe2573a80814f8fdc2e4b5a5d908c2",
    ),
    3: (
        "17f1be8b9a98e753036b116a873aaa30d9edd4278497b7c2d46b61b094872f8a",
        "32dd1a117920b0a819cb5f0b41e40638ce97c1ace21f05870336f6e962b6aff0",
    ),
    4: (
        "2589e6b150d4cb8678bac37aa0a205fafc5910e1c0188e252b192734758fde85",
        "b4f1379192ef637424a1c4a62ed7c0722c1517abb24da17f072e35183de5c5ae",
    ),
    5: (
        "1473df48504bddfb2cb18e018157ba078425b8210226a61f4f1ab242a87af26c",
        "af9b0056cc88d22cdbc601ed05e83c6b65add26d67402cddfe679231b3560fcb",
    ),
    6: (
        "de0f394d87c07538487daac4350768db7769aa35a1ce8fcaf9968c166af2477f",
        "74a0888a0b3674176a35c0244c74e540d9dbc39fe00cb5925a2f5d0ad7b1146e",
    ),
}


def index_names(settings: Settings | None) -> dict[str, str]:
    """The value of every name slot: from the settings, else the defaults."""
    if settings is None:
        return dict(templates.NAME_DEFAULTS)
    prefix = getattr(settings, "index_prefix", _DEFAULT_PREFIX)
    names: dict[str, str] = {}
    for slot, default in templates.NAME_DEFAULTS.items():
        if slot in SETTING_NAMES:
            names[slot] = getattr(settings, SETTING_NAMES[slot])
        else:
            names[slot] = prefix + default[len(_DEFAULT_PREFIX) :]
    return names


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    path: Path
    text: str

    @property
    def checksum(self) -> str:
        return templates.checksum(
            self.text, self.path.name, PRESETS["guidedrag"], index_names(None)
        )

    def accepts(self, recorded: str | None) -> bool:
        """Whether a recorded checksum means "this file, as it is now, was applied"."""
        if recorded == self.checksum:
            return True
        released, canonical = _RELEASED.get(self.version, (None, None))
        return recorded == released and self.checksum == canonical

    def applies_to(self, server: ServerInfo) -> bool:
        for op, version in _REQUIRES_RE.findall(self.text):
            wanted = tuple(int(p) for p in version.split("."))
            have = server.version_tuple[: len(wanted)]
            if op == ">=" and have < wanted:
                return False
            if op == "<" and have >= wanted:
                return False
        return True

    def statements(self, schema: SchemaMapping, names: dict[str, str] | None = None) -> list[str]:
        try:
            return templates.statements(
                self.text, self.path.name, schema, names or index_names(None)
            )
        except ConfigurationError as exc:
            raise MigrationError(str(exc)) from None


def created_objects(statements: list[str]) -> list[str]:
    """Names of the indexes and constraints that ``statements`` create (unescaped)."""
    names: list[str] = []
    for statement in statements:
        match = _OBJECT_RE.match(statement)
        if match:
            raw = match.group(2)
            names.append(raw[1:-1].replace("``", "`") if raw.startswith("`") else raw)
    return names


def discover(folder: Path | None = None) -> list[Migration]:
    folder = folder or migrations_dir()
    found: list[Migration] = []
    for path in sorted(folder.glob("*.cypher")):
        match = _FILE_RE.match(path.name)
        if not match:
            raise MigrationError(
                f"{path}: migration files must be named V0001__what_it_does.cypher"
            )
        found.append(
            Migration(int(match.group(1)), match.group(2), path, path.read_text(encoding="utf-8"))
        )
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise MigrationError(f"two migration files share a version number in {folder}")
    return sorted(found, key=lambda m: m.version)
