"""A small hand-made graph for examples and tests: Rome, Caesar and Gaul (see ``roman_graph``)."""

from __future__ import annotations

import datetime as dt

from guidedrag_graph.selection.evaluator import DocumentRec, EntityRec, InMemoryGraph

HOSTILE = "}) DETACH DELETE n //"


def roman_graph() -> InMemoryGraph:
    """Rome, Caesar and Gaul over three documents; one entity with a hostile name."""
    g = InMemoryGraph()
    g.documents = {
        "d1": DocumentRec("d1", "Roman History", "wiki", dt.date(2005, 3, 1)),
        "d2": DocumentRec("d2", "Paris", "news", dt.date(1999, 1, 1)),
        "d3": DocumentRec("d3", "Undated", "wiki", None),
    }
    g.chunks = {"c1": "d1", "c2": "d1", "c3": "d1", "c4": "d2", "c5": "d3", "c6": "d3"}
    g.entities = {
        "rome": EntityRec("rome", "Rome", ("Roma", "The Eternal City"), "CITY"),
        "caesar": EntityRec("caesar", "Julius Caesar", ("Caesar",), "PERSON"),
        "gaul": EntityRec("gaul", "Gaul", (), "PLACE"),
        "paris": EntityRec("paris", "Paris", ("Lutetia",), "CITY"),
        "empire": EntityRec("empire", "Roman Empire", (), "STATE"),
        "hostile": EntityRec("hostile", HOSTILE, ("`", "{x}"), "ODD"),
    }
    g.mentions = {
        ("c1", "rome"),
        ("c1", "caesar"),
        ("c2", "caesar"),
        ("c2", "gaul"),
        ("c3", "empire"),
        ("c4", "paris"),
        ("c4", "gaul"),
        ("c5", "rome"),
        ("c6", "hostile"),
    }
    g.relations = {
        ("caesar", "FOUGHT_IN", "gaul"),
        ("caesar", "BORN_IN", "rome"),
        ("rome", "CAPITAL_OF", "empire"),
        ("gaul", "NEIGHBOUR_OF", "paris"),
    }
    return g
