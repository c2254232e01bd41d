"""The Cypher templates as the stages use them: ``queries`` (the API every stage calls), ``render``
(variants and slots), ``files``, ``lexer``, ``slot_table``.
"""
