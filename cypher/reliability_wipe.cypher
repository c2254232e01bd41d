// reliability_wipe — empty the kill suite's own database between runs, 20k nodes a call, and
// keep the migration records (the schema stays, as after `guidedrag migrate`). Columns: n.
MATCH (n) WHERE NOT n:__GuidedRAGMigration
WITH n LIMIT 20000
DETACH DELETE n
RETURN count(*) AS n
