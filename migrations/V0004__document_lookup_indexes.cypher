// document(d), source(s) and date(from, to) selections start from these properties.
CREATE INDEX /*document_title_index*/guidedrag_document_title IF NOT EXISTS
FOR (d:/*document_label*/Document) ON (/*document_title*/d.title);
CREATE INDEX /*document_source_index*/guidedrag_document_source IF NOT EXISTS
FOR (d:/*document_label*/Document) ON (/*document_source*/d.source);
CREATE INDEX /*document_date_index*/guidedrag_document_date IF NOT EXISTS
FOR (d:/*document_label*/Document) ON (/*document_date*/d.date);
