// selection_given — chunks given by id (retrieval's `ChunkIdSelection`): after the fragment `c`
// is each existing chunk of $sel_chunk_ids once, as after a compiled selection. (Every chunk,
// `AllChunks`, is select_all's "alone" fragment.)
// Columns: id.
:param sel_chunk_ids => ['c1', 'c2', 'c3'];
// @fragment ids
MATCH (c:/*chunk_label*/Chunk) WHERE /*chunk_id*/c.id IN $sel_chunk_ids
// @end
RETURN /*chunk_id*/c.id AS id
