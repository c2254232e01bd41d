"""Cold and warm start times of the managed Neo4j, median of N, for one version.

cold = a new home (initial password set, system and neo4j stores created);
warm = a restart of a home that has run before. Prints the jar download size too.

    python benchmarks/neo4j_start_bench.py --version 2026.08.1 --runs 3
"""

from __future__ import annotations

import argparse
import socket
import statistics
import tempfile
import time
from pathlib import Path

from guidedrag_graph.config import Settings
from guidedrag_graph.runtime import LocalNeo4j, install


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--version", default=Settings().neo4j_version)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    cache = Settings().neo4j_cache_dir
    began = time.monotonic()
    lib = install(args.version, cache)
    jars = list(lib.glob("*.jar"))
    size = sum(p.stat().st_size for p in jars)
    print(
        f"Neo4j {args.version}: {len(jars)} jars, {size / 2**20:.1f} MiB "
        f"(install step {time.monotonic() - began:.1f}s; cached if ~0)"
    )
    cold: list[float] = []
    warm: list[float] = []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            server = LocalNeo4j(
                Path(tmp),
                version=args.version,
                cache_dir=cache,
                bolt_port=_port(),
                http_port=_port(),
                heap="512m",
                pagecache="128m",
            )
            try:
                cold.append(server.start())
                server.stop()
                warm.append(server.start())
            finally:
                server.stop()
    print(f"cold start: median {statistics.median(cold):.1f}s  runs {[round(x, 1) for x in cold]}")
    print(f"warm start: median {statistics.median(warm):.1f}s  runs {[round(x, 1) for x in warm]}")
    print(f"cold/warm ratio: {statistics.median(cold) / statistics.median(warm):.2f}")


if __name__ == "__main__":
    main()
