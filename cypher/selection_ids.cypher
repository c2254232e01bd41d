// selection_ids — the ids of a selection's chunks (`Selector.chunk_ids`, `guidedrag select`).
// The compiled selection replaces the example between the markers.
// Columns: id.
:param sel_chunk_ids => ['c1', 'c2', 'c3'];
// selection:begin
MATCH (c:/*chunk_label*/Chunk) WHERE /*chunk_id*/c.id IN $sel_chunk_ids
// selection:end
RETURN /*chunk_id*/c.id AS id
