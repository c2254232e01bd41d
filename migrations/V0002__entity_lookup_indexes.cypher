// Entity resolution: exact normalised-name and alias lookups (range), typo-tolerant suggestions
// (full-text over names and aliases), and type/category selection.
CREATE INDEX {{index:entity_name_key}} IF NOT EXISTS
FOR (e:{{entity_label}}) ON (e.{{entity_key}});
CREATE INDEX {{index:entity_name}} IF NOT EXISTS
FOR (e:{{entity_label}}) ON (e.{{entity_name}});
CREATE INDEX {{index:entity_type}} IF NOT EXISTS
FOR (e:{{entity_label}}) ON (e.{{entity_type}});
CREATE FULLTEXT INDEX {{index:entity_fulltext}} IF NOT EXISTS
FOR (e:{{entity_label}}) ON EACH [e.{{entity_name}}, e.{{entity_aliases}}];
