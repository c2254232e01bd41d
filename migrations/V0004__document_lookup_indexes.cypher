// document(d), source(s) and date(from, to) selections start from these properties.
CREATE INDEX {{index:document_title}} IF NOT EXISTS
FOR (d:{{document_label}}) ON (d.{{document_title}});
CREATE INDEX {{index:document_source}} IF NOT EXISTS
FOR (d:{{document_label}}) ON (d.{{document_source}});
CREATE INDEX {{index:document_date}} IF NOT EXISTS
FOR (d:{{document_label}}) ON (d.{{document_date}});
