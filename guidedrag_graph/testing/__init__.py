"""Test support shipped with the package: reference graphs, their loader, fuzz corpora and
conformance suites that any backend (the Cypher compiler, a future one) can be run against.

Haystack's ``haystack.testing`` is the model: a suite lives beside the code it checks, so a
new backend or preset imports the same cases instead of copying them. Nothing here runs in the
retrieval path; ``selection_conformance`` and ``retrieval_conformance`` need pytest.
"""
