"""Linking: the entities (and relation types) a bare question names, found in the KB's keys
(``entities``, ``relations``, ``text``, ``index``, ``name_spans``), and the taggers the
evaluation compares.
"""
