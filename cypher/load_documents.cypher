// load_documents — the loader's documents: MERGE on id, then the same values every run (a
// document the database held with other values was refused or reported before, see
// load_conflicts). One it creates gets the :__GuidedRAGLoaded label: `kb wipe` deletes only those.
// Columns: none (the loader reads the server's counters).
:param rows => [{id: 'd-example', title: 'Example', source: 'manual', date: '2020-01-01', metadata: {}}];

UNWIND $rows AS row
MERGE (d:/*document_label*/Document {/*document_id*/id: row.id})
ON CREATE SET d:__GuidedRAGLoaded
SET /*document_title*/d.title = row.title, /*document_source*/d.source = row.source,
    /*document_date*/d.date = CASE WHEN row.date IS NULL THEN null ELSE date(row.date) END,
    d += row.metadata
