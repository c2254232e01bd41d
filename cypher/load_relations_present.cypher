// load_relations_present — does any entity-to-entity relationship exist yet? If none, the
// loader CREATEs this bundle's relations; otherwise (a rerun, a resumed or second bundle) it
// MERGEs them. Columns: present.
:param unused => null;

OPTIONAL MATCH (:/*entity_label*/Entity)-[r]->(:/*entity_label*/Entity)
WITH r LIMIT 1
RETURN r IS NOT NULL AS present
