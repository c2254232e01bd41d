// inspect_properties — the property keys of a sample of one label's nodes: how many have each,
// how many distinct values, the value types and the mean length of string values (the chunk
// text is the long one, an id the unique one, an embedding a LIST<FLOAT>).
// Columns: key, present, distinct, types, avg_length.
:param label => 'Chunk';
:param sample => 200;

MATCH (n:$($label))
WITH n LIMIT $sample
UNWIND keys(n) AS key
WITH key, n[key] AS value
RETURN key, count(*) AS present, count(DISTINCT value) AS distinct,
       collect(DISTINCT valueType(value))[..3] AS types,
       avg(CASE WHEN valueType(value) STARTS WITH 'STRING' THEN size(value) END) AS avg_length
ORDER BY present DESC, key
