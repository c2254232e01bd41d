// adoption_record_write — remember what `guidedrag kb adopt` created (one node, merged).
:param record => {indexes: ['entity_names'], name_keys: 'name_key', entity_label: 'Entity'};
MERGE (a:__GuidedRAGAdoption {key: 'adoption'})
SET a += $record
