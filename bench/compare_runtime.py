"""The runtime benchmarks of this tree and of another commit, side by side in one run:
`python -m bench.compare_runtime [REV] [--runs N]` (REV defaults to HEAD~1).

Runs alternate (that commit, this tree, that commit, ...) so a machine that slows down or
speeds up during the run weighs on both alike; medians are printed for each."""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
METRICS = {
    "per round (ms)": re.compile(r"per provider round.*?\| ([\d.]+) ms"),
    "one-round turn (ms)": re.compile(r"whole one-round turn.*?\| ([\d.]+) ms"),
    "submits/s": re.compile(r"submit\(\) throughput.*?\| ([\d,]+) messages/s"),
}


def run_once(tree: Path) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-m", "bench.runtime_bench"],
        cwd=tree,
        env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = {}
    for name, pattern in METRICS.items():
        match = pattern.search(out)
        if match is None:
            raise SystemExit(f"no {name!r} in the output of {tree}:\n{out}")
        found[name] = float(match.group(1).replace(",", ""))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev", nargs="?", default="HEAD~1")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        other = Path(tmp) / "other"
        subprocess.run(
            ["git", "worktree", "add", "--detach", "--quiet", str(other), args.rev],
            cwd=ROOT,
            check=True,
        )
        try:
            results: dict[str, list[dict[str, float]]] = {args.rev: [], "this tree": []}
            for n in range(args.runs):
                for label, tree in ((args.rev, other), ("this tree", ROOT)):
                    results[label].append(run_once(tree))
                    print(f"run {n + 1}/{args.runs} {label}: {results[label][-1]}", flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(other)], cwd=ROOT)
    print(f"\n| median of {args.runs} | {args.rev} | this tree | change |\n|---|---|---|---|")
    for name in METRICS:
        before = statistics.median(r[name] for r in results[args.rev])
        after = statistics.median(r[name] for r in results["this tree"])
        print(f"| {name} | {before:g} | {after:g} | {(after - before) / before:+.1%} |")


if __name__ == "__main__":
    main()
