"""The ``cypher/`` templates by name: parsed once, their includes checked, their variants chosen,
and each variant as Neo4j Browser runs it.

Split out of ``templates/queries.py`` so what belongs to a template *file* (its ``// @include``
lines
name real, plain fragments; a ``variant`` choice names axes and values the file declares; the
Browser script of one choice) reads apart from filling slots. ``templates`` re-exports ``load``,
``variants``, ``check_includes`` and ``browser_script``.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.resources import cypher_template
from guidedrag_graph.templates import lexer as L


def variants(name: str) -> dict[str, tuple[str, ...]]:
    """The variant axes ``cypher/<name>.cypher`` declares (``// @variants``), each with its
    values, the first the default (what ``browser_script`` gives without a choice)."""
    return dict(load(name).variants)


def load(name: str) -> L.Template:
    """``cypher/<name>.cypher`` parsed, its includes checked (cached per file)."""
    return _template(name)


@cache
def _template(name: str) -> L.Template:
    template = L.parse(cypher_template(name), f"cypher/{name}.cypher")
    check_includes(template)
    return template


def check_includes(template: L.Template) -> None:
    """Each ``// @include <file> <fragment>`` names a fragment that exists and is plain (no
    includes or variants of its own): refused at load, naming the file and line."""
    for include in template.includes:
        try:
            target: L.Template | None = _template(include.file)
        except (ConfigurationError, OSError):
            target = None
        if target is None or include.part not in target.fragments:
            raise ConfigurationError(
                f"{template.origin}:{include.number}: '// @include {include.file} "
                f"{include.part}' names no fragment of cypher/{include.file}.cypher"
            )
        if target.includes or target.variants:
            raise ConfigurationError(
                f"{template.origin}:{include.number}: cypher/{include.file}.cypher has includes "
                f"or variants of its own; an included fragment must be plain"
            )


def chosen(template: L.Template, variant: Mapping[str, str] | None) -> dict[str, str]:
    """``variant`` checked against what ``template`` declares, every axis filled (default:
    its first value): an unknown axis or value is an error naming both."""
    picked = {axis: values[0] for axis, values in template.variants.items()}
    for axis, value in (variant or {}).items():
        declared = template.variants.get(axis)
        if declared is None or value not in declared:
            shown = " ".join(f"{a}={'|'.join(v)}" for a, v in template.variants.items())
            raise ConfigurationError(
                f"{template.origin} has no variant {axis}={value} (it declares: "
                f"{shown or 'no variants'}); choose one of those"
            )
        picked[axis] = value
    return picked


def browser_script(name: str, variant: Mapping[str, str] | None = None) -> str:
    """``cypher/<name>.cypher`` as Neo4j Browser runs it, for one choice of its variants: the
    file's text with the other variants' blocks (their ``:param`` lines too) left out and each
    ``// @include`` replaced by the lines of the fragment it names; slot comments stay, so
    Browser runs the default schema. A file without variants or includes comes back as written."""
    template = load(name)
    picked = chosen(template, variant)
    return "\n".join(_script_lines(cypher_template(name), template.origin, picked)) + "\n"


def _script_lines(text: str, origin: str, picked: dict[str, str]) -> list[str]:
    out: list[str] = []
    keep: list[bool] = []
    for line in text.splitlines():
        marker = line.strip()[2:].strip() if line.strip().startswith("//") else ""
        if marker.startswith("@variant "):
            axis, values = marker.split()[1].split("=")
            keep.append(picked[axis] in values.split("|"))
        elif marker == "@end-variant":
            keep.pop()
        elif not all(keep) or marker.startswith("@variants"):
            continue
        elif marker.startswith("@include "):
            file, part = marker.split()[1:]
            out += _fragment_lines(cypher_template(file), part)
        else:
            out.append(line)
    return out


def _fragment_lines(text: str, part: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.strip() == f"// @fragment {part}")
    end = next(i for i in range(start, len(lines)) if lines[i].strip() == "// @end")
    return lines[start + 1 : end]
