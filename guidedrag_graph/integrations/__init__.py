"""Adapters to other libraries (neo4j-graphrag)."""
