"""neo4j.conf lines for the servers a test session runs (its own, and ``.ci/run``'s, which reads
them from here: ``python -m tests.server_conf`` prints them as ``--conf`` options)."""

from __future__ import annotations

# The session's servers never replan a cached query when the data's statistics move: tests
# wipe and load the same small KBs over and over, so every cached plan looked stale within
# 10 s (the default ``min_replan_interval``) and was compiled again. Compiling Cypher is most of
# a test server's CPU (JFR, a database-heavy subset: at least 42% of its samples under the
# parser, rewriters and planner, against 15% executing, most of the rest Scala collection frames
# cut off below them); on that subset these lines took the server from 320 to 259 CPU-s and
# pytest from 232 to 184 s. Plans, not results, can differ; benchmarks never run so.
TEST_NEO4J_CONF = (
    "dbms.cypher.min_replan_interval=1h",
    "dbms.cypher.statistics_divergence_threshold=1.0",
)


if __name__ == "__main__":
    print(" ".join(f"--conf {line}" for line in TEST_NEO4J_CONF))
