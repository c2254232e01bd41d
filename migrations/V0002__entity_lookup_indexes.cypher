// Entity resolution: exact normalised-name and alias lookups (range), typo-tolerant suggestions
// (full-text over names and aliases), and type/category selection.
CREATE INDEX /*entity_name_key_index*/guidedrag_entity_name_key IF NOT EXISTS
FOR (e:/*entity_label*/Entity) ON (/*entity_key*/e.name_key);
CREATE INDEX /*entity_name_index*/guidedrag_entity_name IF NOT EXISTS
FOR (e:/*entity_label*/Entity) ON (/*entity_name*/e.name);
CREATE INDEX /*entity_type_index*/guidedrag_entity_type IF NOT EXISTS
FOR (e:/*entity_label*/Entity) ON (/*entity_type*/e.type);
CREATE FULLTEXT INDEX /*entity_fulltext_index*/entity_names IF NOT EXISTS
FOR (e:/*entity_label*/Entity) ON EACH [/*entity_name*/e.name, /*entity_aliases*/e.aliases];
