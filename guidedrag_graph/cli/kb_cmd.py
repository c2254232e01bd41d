"""The ``guidedrag kb`` group (stats, embed-entities, inspect, adopt, wipe) and ``guidedrag
datasets musique`` / ``2wiki``; ``guidedrag load`` is ``load_cmd``."""

from __future__ import annotations

from pathlib import Path

import click

from guidedrag_graph.cli.common import driver_for, echo_json, load_settings, schema_of
from guidedrag_graph.cli.load_cmd import with_overrides
from guidedrag_graph.cli.schema_option import schema_option
from guidedrag_graph.errors import GuidedRAGError
from guidedrag_graph.identifiers import printable, quote_name
from guidedrag_graph.kb.stats import kb_stats
from guidedrag_graph.vocabulary import LOADABLE_PRESETS, SCHEMA_PRESETS


@click.group()
def kb() -> None:
    """Inspect the knowledge base."""


@kb.command()
@click.option("--preset", type=click.Choice(LOADABLE_PRESETS), default=None, help="schema")
@click.option("--relation-mode", type=click.Choice(["types", "property"]), default=None)
@click.option("--json", "as_json", is_flag=True, help="print as JSON")
def stats(preset: str | None, relation_mode: str | None, as_json: bool) -> None:
    """Documents, chunks, entities, relations, relation types, missing embeddings, indexes."""
    settings = with_overrides(load_settings(), preset, relation_mode)
    with driver_for(settings) as driver:
        data = kb_stats(driver, settings, schema_of(settings))
    if as_json:
        echo_json(data)
        return
    for key in (
        "schema_preset",
        "documents",
        "chunks",
        "chunks_without_embedding",
        "entities",
        "mentions",
        "relations",
        "relation_types",
    ):
        echo(f"{key:<26}{data[key]}")
    if data["top_relation_types"]:
        top = ", ".join(
            f"{quote_name(str(t['type']))} ({t['count']})" for t in data["top_relation_types"]
        )
        click.echo(f"{'top relation types':<26}{top}")
    click.echo("indexes:")
    for index in data["indexes"]:
        echo(
            f"  {index['name']:<36}{index['type']:<10}{index['state']:<10}"
            f"{index['population_percent']:>6.1f}%  {index['on']}"
        )


@kb.command("embed-entities")
@click.option("--batch-size", default=256, show_default=True, type=click.IntRange(1, 10_000))
@click.option("--no-progress", is_flag=True, help="no progress bar")
@click.option("--json", "as_json", is_flag=True, help="print the report as JSON")
def embed_entities(batch_size: int, no_progress: bool, as_json: bool) -> None:
    """Store entity-name embeddings and their vector index (for the embedding and hybrid
    taggers); on an adopted graph the index is created and recorded."""
    from guidedrag_graph.kb.entity_names import embed_entity_names_and_index

    settings = load_settings()
    with driver_for(settings) as driver:
        report = embed_entity_names_and_index(
            driver,
            settings,
            schema_of(settings),
            batch_size=batch_size,
            progress=not no_progress and not as_json,
        )
    if as_json:
        echo_json(report.to_dict())
        return
    click.echo(f"embedded {report.embedded} entity names")
    verb = "created" if report.vector_index_created else "uses"
    click.echo(f"{verb} the entity-name vector index {report.vector_index_name}")
    for note in report.notes:
        echo(f"note: {note}")


@click.group()
def datasets() -> None:
    """Convert public benchmarks into KB bundles."""


@datasets.command()
@click.argument("source", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("out_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--limit", type=int, default=None, help="keep the first N questions and their paragraphs"
)
@click.option(
    "--embed", is_flag=True, help="precompute chunk embeddings with the configured embedder"
)
@click.option("--round", "round_digits", type=int, default=None, help="round embeddings (decimals)")
@click.option("--named-only", is_flag=True, help="only questions whose text names their entity")
@click.option("--json", "as_json", is_flag=True, help="print the conversion report as JSON")
def musique(
    source: Path,
    out_dir: Path,
    limit: int | None,
    embed: bool,
    round_digits: int | None,
    named_only: bool,
    as_json: bool,
) -> None:
    """MuSiQue (HippoRAG subset + OpenIE) -> OUT_DIR (bundle) and OUT_DIR/unanswerable."""
    from guidedrag_graph.embeddings import embedder_for
    from guidedrag_graph.kb.musique import convert_musique

    embedder = embedder_for(load_settings()) if embed else None
    report = convert_musique(
        source,
        out_dir,
        limit=limit,
        embedder=embedder,
        round_digits=round_digits,
        named_only=named_only,
    )
    if as_json:
        echo_json(report.to_dict())
        return
    for line in report.lines():
        click.echo(line)


@datasets.command("2wiki")
@click.argument("source", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("out_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--limit", type=int, default=None, help="keep the first N questions")
@click.option(
    "--embed", is_flag=True, help="precompute chunk embeddings with the configured embedder"
)
@click.option("--round", "round_digits", type=int, default=None, help="round embeddings (decimals)")
@click.option("--json", "as_json", is_flag=True, help="print the conversion report as JSON")
def two_wiki(
    source: Path,
    out_dir: Path,
    limit: int | None,
    embed: bool,
    round_digits: int | None,
    as_json: bool,
) -> None:
    """2WikiMultihopQA (development split) -> OUT_DIR (bundle with typed relations)."""
    from guidedrag_graph.embeddings import embedder_for
    from guidedrag_graph.kb.twowiki import convert_2wiki

    embedder = embedder_for(load_settings()) if embed else None
    report = convert_2wiki(
        source, out_dir, limit=limit, embedder=embedder, round_digits=round_digits
    )
    if as_json:
        echo_json(report.to_dict())
        return
    for line in report.lines()[:-1]:
        click.echo(line)


def echo(text: str, nl: bool = True) -> None:
    """``click.echo`` of one line that holds names read from the database (labels, types,
    keys, index names), through ``printable``: no control character, escape sequence or line
    break in a name reaches the terminal or fakes a line of output."""
    click.echo(printable(text), nl=nl)


# --- existing graphs: kb inspect / kb adopt (docs/existing-kgs.md) ---------------------------
@kb.command("inspect")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="write the proposed mapping file here (default: print it)",
)
@click.option("--sample", default=200, show_default=True, help="nodes sampled per label")
@click.option("--json", "as_json", is_flag=True, help="print the layout and proposal as JSON")
def inspect_cmd(out: Path | None, sample: int, as_json: bool) -> None:
    """Read an existing graph's layout and propose a schema mapping file (changes nothing)."""
    from guidedrag_graph.db.fit import fitting_preset, schema_mismatch
    from guidedrag_graph.kb.inspect import inspect_graph, propose_mapping
    from guidedrag_graph.schema.presets import mapping_document, to_toml

    settings = load_settings()
    with driver_for(settings) as driver:
        layout = inspect_graph(driver, settings.neo4j_database, sample=sample)
        proposed, notes = propose_mapping(layout)
        preset = fitting_preset(driver, settings.neo4j_database, layout.labels)
        try:
            current = schema_mismatch(driver, settings.neo4j_database, schema_of(settings))
        except GuidedRAGError as exc:
            current = str(exc)
    header = "\n".join(
        [
            "Schema mapping proposed by `guidedrag kb inspect`: check every guess, then use it",
            "with --schema FILE or GUIDEDRAG_SCHEMA_FILE=FILE (see docs/existing-kgs.md).",
            *(f"note: {printable(note)}" for note in notes),
        ]
    )
    text = to_toml(mapping_document(proposed), header)
    if as_json:
        echo_json(
            {
                "layout": layout.to_dict(),
                "mapping": mapping_document(proposed),
                "notes": notes,
                "configured_mapping_mismatch": current,
                "fitting_preset": preset,
            }
        )
    else:
        echo("labels:")
        for label, count in layout.labels.items():
            keys = ", ".join(p.key for p in layout.properties.get(label, []))
            echo(f"  :{label:<28}{count:>10,}  {keys}")
        echo("relationships (sampled):")
        for a, rtype, b, n in layout.relationships:
            echo(f"  ({':'.join(a)})-[:{rtype}]->({':'.join(b)})  {n:,}")
        echo("indexes:")
        for index in layout.indexes:
            on = ", ".join(index["properties"] or [])
            labels = ":".join(index["labels"] or [])
            echo(f"  {index['name']:<32}{index['type']:<10}:{labels}({on})")
        echo(
            "configured mapping: "
            + ("fits this graph" if current is None else f"does not fit: {current}")
        )
        if preset is not None:
            echo(f"fitting preset: {preset} — adopt with `guidedrag kb adopt --preset {preset}`")
        else:
            echo(
                "fitting preset: none — write the mapping below to a file (--out mapping.toml), "
                "check it, then `guidedrag kb adopt --schema mapping.toml`"
            )
    if out is not None:
        out.write_text(text, encoding="utf-8")
        if not as_json:
            echo(
                f"wrote the proposed mapping to {out}; review it, then: "
                f"guidedrag kb adopt --schema {out}"
            )
    elif not as_json:
        echo("")
        click.echo(text, nl=False)  # to_toml escapes every value and note already


@kb.command("adopt")
@schema_option
@click.option(
    "--preset",
    type=click.Choice(sorted(SCHEMA_PRESETS)),
    default=None,
    help="the builder's layout (default: GUIDEDRAG_SCHEMA_PRESET, else what adopt recorded); "
    "`guidedrag kb inspect` names the one that fits",
)
@click.option("--drop", is_flag=True, help="undo: drop what adopt created, nothing else")
@click.option("--no-progress", is_flag=True, help="no progress bar")
@click.option("--json", "as_json", is_flag=True, help="print the report as JSON")
def adopt_cmd(preset: str | None, drop: bool, no_progress: bool, as_json: bool) -> None:
    """Create only what guided retrieval needs on an existing graph (full-text index on entity
    names, name_key, chunk vector index) and record it, so later commands need no variable set;
    --drop undoes it."""
    from guidedrag_graph.db.fit import schema_mismatch
    from guidedrag_graph.errors import ConfigurationError
    from guidedrag_graph.kb.adopt import adopt, unadopt

    settings = load_settings()
    if preset is not None:
        settings = settings.model_copy(update={"schema_preset": preset})
    with driver_for(settings) as driver:
        schema = schema_of(settings)
        if drop:
            report = unadopt(driver, settings, schema)
        else:
            mismatch = schema_mismatch(driver, settings.neo4j_database, schema)
            if mismatch is not None:
                raise ConfigurationError(mismatch)
            report = adopt(driver, settings, schema, progress=not no_progress and not as_json)
    if as_json:
        echo_json(report.to_dict())
        return
    for line in report.lines() or ["nothing to do"]:
        echo(line)  # index names and notes read from the graph


@kb.command("wipe")
@click.option("--yes", is_flag=True, help="do not ask")
@click.option(
    "--force",
    is_flag=True,
    help="also delete chunk, document and entity nodes guidedrag's loader did not create (an "
    "adopted or foreign graph, or a KB loaded before guidedrag marked its nodes): their data goes",
)
@click.option("--json", "as_json", is_flag=True, help="print what was deleted as JSON")
def wipe(yes: bool, force: bool, as_json: bool) -> None:
    """Delete the documents, chunks and entities guidedrag loaded (indexes and migrations stay).

    Only nodes the loader created (label :__GuidedRAGLoaded) are deleted: other nodes beside the
    KB, and yours that a bundle merged onto, stay and are counted; --force deletes them too.
    """
    from guidedrag_graph.context import adoption_record
    from guidedrag_graph.db.connection import read_query
    from guidedrag_graph.errors import ConfigurationError
    from guidedrag_graph.kb.stats import kb_stats
    from guidedrag_graph.kb.wipe import left_after_wipe, wipe_kb
    from guidedrag_graph.templates.queries import query

    settings = load_settings()
    with driver_for(settings) as driver:
        schema = schema_of(settings)  # after driver_for: an adopted graph's own labels
        database = settings.neo4j_database
        migrated = bool(read_query(driver, query("migration_records"), database=database))
        adopted = bool(adoption_record(driver, database))
        if (adopted or not migrated) and not force:
            why = (
                "was adopted (`guidedrag kb adopt`): its data is another tool's"
                if adopted
                else "was not loaded by guidedrag (no migration records)"
            )
            raise ConfigurationError(
                f"this graph {why}; refusing to delete it — pass --force to delete its "
                f"documents, chunks and entities anyway"
            )
        counts = kb_stats(driver, settings, schema)
        if not force:  # only what the loader created goes
            left = left_after_wipe(driver, settings, schema)
            counts = {k: counts[k] - left[k] for k in left}
        what = (
            f"{counts['documents']} documents, {counts['chunks']} chunks and "
            f"{counts['entities']} entities"
        )
        if not yes:
            click.confirm(f"delete {what} from {settings.neo4j_database}?", abort=True, err=True)
        report = wipe_kb(driver, settings, schema, everything=force)
    note = report.left_note()
    if as_json:
        echo_json(
            {
                "deleted_nodes": report.deleted,
                "deleted_relations": report.relations_deleted,
                "left_nodes": report.left,
                "database": database,
            }
        )
        return
    click.echo(f"deleted {report.deleted} nodes ({what})")
    if report.relations_deleted:
        click.echo(
            f"deleted {report.relations_deleted} relations the loader drew between entities it "
            f"did not create"
        )
    if note is not None:
        click.echo(f"note: {note}")
