"""The complexity budget of `make lint`: no function of the package above MAX_FUNCTION
(radon's cyclomatic complexity), and the package's mean beside its goal (make lint
passes --max-mean, so the mean is kept at most the goal).

    python scripts/complexity.py [--max-function N] [--max-mean X] [PATH]

Exits 1 naming every function over the limit, or when --max-mean is given and the
mean is above it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from radon.complexity import cc_visit
from radon.visitors import Class

MAX_FUNCTION = 20
MEAN_GOAL = 3.2


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", nargs="?", default="audit")
    ap.add_argument("--max-function", type=int, default=MAX_FUNCTION)
    ap.add_argument("--max-mean", type=float, default=None)
    args = ap.parse_args(argv)
    total = count = 0
    over: list[str] = []
    for file in sorted(Path(args.path).rglob("*.py")):
        for block in cc_visit(file.read_text(encoding="utf-8")):
            total += block.complexity
            count += 1
            if not isinstance(block, Class) and block.complexity > args.max_function:
                over.append(f"{file}:{block.lineno} {block.name} {block.complexity}")
    mean = total / count if count else 0.0
    print(
        f"complexity: {count} blocks, mean {mean:.2f} (goal {MEAN_GOAL}), "
        f"functions over {args.max_function}: {len(over)}"
    )
    for line in over:
        print(f"  {line}")
    too_complex = args.max_mean is not None and mean > args.max_mean
    return 1 if over or too_complex else 0


if __name__ == "__main__":
    sys.exit(main())
