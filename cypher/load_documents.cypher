// load_documents — the loader's documents: MERGE on id, then the same values every run.
// Columns: none (the loader reads the server's counters).
:param rows => [{id: 'd-example', title: 'Example', source: 'manual', date: '2020-01-01', metadata: {}}];

UNWIND $rows AS row
MERGE (d:/*document_label*/Document {/*document_id*/id: row.id})
SET /*document_title*/d.title = row.title, /*document_source*/d.source = row.source,
    /*document_date*/d.date = CASE WHEN row.date IS NULL THEN null ELSE date(row.date) END,
    d += row.metadata
