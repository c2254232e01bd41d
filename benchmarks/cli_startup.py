"""How long ``guidedrag --help`` takes, and which imports cost the most.

Prints the median (and min/max) of N runs of ``guidedrag --help`` next to N runs that import
every command module (what the CLI did before its commands were loaded lazily), measured in
alternation in one process so machine load hits both alike; then the top offenders of
``python -X importtime`` for both. The load average is printed beside every figure.

    python benchmarks/cli_startup.py [-n 15] [--top 12]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

_RUN_HELP = "\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass"
HELP = "from guidedrag_graph.cli import main" + _RUN_HELP
EAGER = "from guidedrag_graph.cli import load_all, main\nload_all()" + _RUN_HELP


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def _time(cmd: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def _help_command() -> list[str]:
    """The installed entry point if it is on PATH next to this Python, else the same code."""
    script = shutil.which("guidedrag", path=os.path.dirname(sys.executable))
    return [script, "--help"] if script else [sys.executable, "-c", HELP]


def _importtime(code: str, top: int) -> list[tuple[int, str]]:
    """(cumulative µs, module) of the top-level imports that cost the most."""
    err = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=True,
    ).stderr
    rows = []
    for line in err.splitlines():
        match = re.match(r"import time:\s+\d+ \|\s+(\d+) \|( *)(\S+)", line)
        if match and len(match.group(2)) <= 2:  # top-level imports only (their cost is cumulative)
            rows.append((int(match.group(1)), match.group(3)))
    return sorted(rows, reverse=True)[:top]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=15, help="runs of each (default 15)")
    parser.add_argument("--top", type=int, default=12, help="import offenders to list")
    args = parser.parse_args()

    help_cmd = _help_command()
    eager_cmd = [sys.executable, "-c", EAGER]
    _time(help_cmd)  # warm the page cache and .pyc files once
    _time(eager_cmd)
    lazy_s, eager_s = [], []
    print(f"before: {_load()}")
    for _ in range(args.n):
        lazy_s.append(_time(help_cmd))
        eager_s.append(_time(eager_cmd))
    print(f"after:  {_load()}")
    lazy, eager = statistics.median(lazy_s), statistics.median(eager_s)
    print(f"`{' '.join(os.path.basename(c) for c in help_cmd[:2])}` ({args.n} runs):")
    for label, median, runs in (
        ("guidedrag --help       ", lazy, lazy_s),
        ("every command imported ", eager, eager_s),
    ):
        print(f"  {label} median {median:.3f}s  (min {min(runs):.3f}, max {max(runs):.3f})")
    print(
        f"  ratio eager/lazy {eager / lazy:.1f}x; target for --help: < 0.5 s -> "
        f"{'met' if lazy < 0.5 else 'NOT met'} ({_load()})"
    )
    for title, code in (("guidedrag --help", HELP), ("every command imported", EAGER)):
        print(f"\npython -X importtime, {title}: top {args.top} top-level imports ({_load()})")
        for micros, module in _importtime(code, args.top):
            print(f"  {micros / 1000:8.1f} ms  {module}")


if __name__ == "__main__":
    main()
