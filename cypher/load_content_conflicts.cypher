// load_content_conflicts — before a load writes anything: what the database holds under the
// bundle's document and chunk ids (the loader SETs every field, so a differing value would be
// overwritten). Rows carry ids and metadata keys only, never the text: a fresh load reads
// nothing back, and Python compares what an id already holds (kb/load_conflicts.py). Read only.
// Columns: id, title, source, date, meta (documents); id, text, position, document_id, meta
// (chunks); meta: the values of the row's metadata keys, in their order.
:param rows => [{id: 'd-example', keys: ['lang']}];

// @fragment documents
UNWIND $rows AS row
MATCH (d:/*document_label*/Document {/*document_id*/id: row.id})
RETURN row.id AS id, /*document_title*/d.title AS title, /*document_source*/d.source AS source,
       toString(/*document_date*/d.date) AS date, [k IN row.keys | d[k]] AS meta
// @end
;

// @fragment chunks
UNWIND $rows AS row
MATCH (c:/*chunk_label*/Chunk {/*chunk_id*/id: row.id})
RETURN row.id AS id, /*chunk_text*/c.text AS text, /*chunk_position*/c.position AS position,
       c.document_id AS document_id, [k IN row.keys | c[k]] AS meta
// @end
;
