// show_databases — the databases a user may pick (NEO4J_DATABASE); run against `system`.
// Columns: name.
SHOW DATABASES YIELD name, type
WHERE type <> 'system'
RETURN name ORDER BY name;
