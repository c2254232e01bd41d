// load_content_conflicts — before a load writes anything: what the database holds under the
// bundle's document and chunk ids (the loader SETs every field, so a differing value would be
// overwritten). Rows carry ids and metadata keys only, never the text: a fresh load reads
// nothing back, and Python compares what an id already holds (kb/load_conflicts.py). Read only.
// Columns: id, stored, meta.
// (stored: the fields the loader sets, by bundle name; meta: the values of the row's metadata
// keys, in their order.)
:param rows => [{id: 'd-example', keys: ['lang']}];

// @fragment documents
UNWIND $rows AS row
MATCH (d:/*document_label*/Document {/*document_id*/id: row.id})
RETURN row.id AS id,
       {title: /*document_title*/d.title, source: /*document_source*/d.source, date: toString(/*document_date*/d.date)} AS stored,
       [k IN row.keys | d[k]] AS meta
// @end
;

// @fragment chunks
UNWIND $rows AS row
MATCH (c:/*chunk_label*/Chunk {/*chunk_id*/id: row.id})
RETURN row.id AS id,
       {text: /*chunk_text*/c.text, position: /*chunk_position*/c.position, document_id: c.document_id} AS stored,
       [k IN row.keys | c[k]] AS meta
// @end
;
