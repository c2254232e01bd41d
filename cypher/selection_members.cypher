// Which of the given chunks belong to a selection: used after an index search over U (soft
// steering, and the post-filter path on servers without filtered SEARCH).
:param sel_chunk_ids => ['c1', 'c2', 'c3'];
:param candidate_ids => ['c2', 'c9'];
// selection:begin
MATCH (c:/*chunk_label*/`Chunk`) WHERE /*chunk_id*/c.id IN $sel_chunk_ids
// selection:end
WITH c WHERE /*chunk_id*/c.id IN $candidate_ids
RETURN /*chunk_id*/c.id AS id
