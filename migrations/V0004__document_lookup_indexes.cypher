// document(d), source(s) and date(from, to) selections start from these properties.
CREATE INDEX guidedrag_document_title IF NOT EXISTS
FOR (d:{{document_label}}) ON (d.{{document_title}});
CREATE INDEX guidedrag_document_source IF NOT EXISTS
FOR (d:{{document_label}}) ON (d.{{document_source}});
CREATE INDEX guidedrag_document_date IF NOT EXISTS
FOR (d:{{document_label}}) ON (d.{{document_date}});
