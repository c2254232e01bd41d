"""GuidedRAG on Neo4j: semantic steering of retrieval-augmented generation.

The paper's five stages are the architecture: configuration (``config``, ``schema``), selection
(``selection``), retrieval, augmentation and generation.
"""

__version__ = "0.1.0"
