"""The eval's reference pieces that need no database: the Lucene escaping the hybrid peer gets,
and the personalized PageRank of ``ppr-reference`` against a hand-checked graph."""

from __future__ import annotations

import numpy as np

from guidedrag_graph.evaluation.peers import PPR_DAMPING, ChunkGraph, lucene_escape


def test_lucene_escape_makes_every_special_character_a_literal() -> None:
    assert lucene_escape("What is AC/DC's 1st album?") == "What is AC\\/DC's 1st album\\?"
    assert lucene_escape('a+b -c && d || !e (f) {g} [h] ^i "j" ~k *l :m \\n') == (
        'a\\+b \\-c \\&\\& d \\|\\| \\!e \\(f\\) \\{g\\} \\[h\\] \\^i \\"j\\" \\~k \\*l \\:m \\\\n'
    )
    assert lucene_escape("cats AND dogs OR NOT birds") == "cats and dogs or not birds"


def _graph(edges: list[tuple[int, int]], nodes: int) -> ChunkGraph:
    pairs = np.asarray(edges, dtype=np.int64)
    src = np.concatenate([pairs[:, 0], pairs[:, 1]])
    dst = np.concatenate([pairs[:, 1], pairs[:, 0]])
    degree = np.bincount(src, minlength=nodes).astype(np.float64)
    return ChunkGraph([], np.zeros((0, 2)), {}, {}, degree, src, dst)


def test_ppr_is_the_fixed_point_of_the_damped_walk() -> None:
    # a path 0 - 1 - 2 and an isolated node 3 (its mass returns to the reset)
    graph = _graph([(0, 1), (1, 2)], 4)
    reset = np.array([1.0, 0.0, 0.0, 1.0])
    p = graph.ppr(reset)
    assert abs(p.sum() - 1.0) < 1e-9
    transition = np.array([[0, 1, 0, 0], [0.5, 0, 0.5, 0], [0, 1, 0, 0], [0, 0, 0, 0]])
    r = reset / reset.sum()
    dangling = p[3]
    expected = (1 - PPR_DAMPING) * r + PPR_DAMPING * (transition.T @ p + dangling * r)
    assert np.allclose(p, expected, atol=1e-9)
    assert p[0] > p[1] > p[2] > 0  # mass decays with the distance from the reset node
