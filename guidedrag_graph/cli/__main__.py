"""``python -m guidedrag_graph.cli``: the same as the ``guidedrag`` command."""

from guidedrag_graph.cli import main

main()
