"""The house's size rules (make lint), measured on the package:

- no module over MAX_MODULE_LINES lines, except the modules named in ALLOWED_LONG_MODULES
  (the command line's option table is one long list and reads best as one);
- no class over MAX_CLASS_LINES lines or MAX_CLASS_METHODS methods;
- of the private functions and methods (a leading underscore, not a dunder), at most
  MAX_USED_ONCE of them referred to by name exactly once in the package: a helper
  called from one place is often a function split only to lower a complexity figure.

    python scripts/house.py [--report] [--max-used-once X] [PATH]

Exits 1 naming every module or class over its limit, and, with --max-used-once, when
the share of private functions used once is above it (without, the share is printed
beside its goal, as scripts/complexity.py prints the mean); `--report` never fails.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections import Counter
from pathlib import Path

MAX_MODULE_LINES = 700
MAX_CLASS_LINES = 400
MAX_CLASS_METHODS = 30
MAX_USED_ONCE = 0.5
ALLOWED_LONG_MODULES = {"audit/cli/options.py"}

_NAME = re.compile(r"\b_[A-Za-z0-9]\w*\b")


def _private_functions(tree: ast.AST) -> list[str]:
    return [
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("_")
        and not node.name.startswith("__")
    ]


def _classes(tree: ast.AST) -> list[tuple[str, int, int, int]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            methods = sum(
                isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) for item in node.body
            )
            lines = (node.end_lineno or node.lineno) - node.lineno + 1
            found.append((node.name, node.lineno, lines, methods))
    return found


def measure(root: Path) -> tuple[list[str], float, int]:
    """Every breach of a size rule, the share of private functions used once, their count."""
    breaches: list[str] = []
    defined: list[str] = []
    uses: Counter[str] = Counter()
    for file in sorted(root.rglob("*.py")):
        text = file.read_text(encoding="utf-8")
        tree = ast.parse(text)
        name = file.as_posix()
        lines = text.count("\n")
        if lines > MAX_MODULE_LINES and name not in ALLOWED_LONG_MODULES:
            breaches.append(f"{name}: {lines} lines (at most {MAX_MODULE_LINES})")
        for cls, lineno, size, methods in _classes(tree):
            if size > MAX_CLASS_LINES or methods > MAX_CLASS_METHODS:
                breaches.append(
                    f"{name}:{lineno} class {cls}: {size} lines, {methods} methods "
                    f"(at most {MAX_CLASS_LINES} and {MAX_CLASS_METHODS})"
                )
        defined.extend(_private_functions(tree))
        uses.update(_NAME.findall(text))
    names = set(defined)
    # a name's occurrences minus its definitions: what refers to it
    definitions = Counter(defined)
    once = [n for n in names if uses[n] - definitions[n] == 1]
    share = len(once) / len(names) if names else 0.0
    return breaches, share, len(names)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", nargs="?", default="audit")
    ap.add_argument("--report", action="store_true", help="print the figures, never fail")
    ap.add_argument("--max-used-once", type=float, default=None, help="fail above this share")
    args = ap.parse_args(argv)
    breaches, share, count = measure(Path(args.path))
    print(
        f"house: {len(breaches)} modules or classes over their size, "
        f"{share:.0%} of {count} private functions used once (goal {MAX_USED_ONCE:.0%})"
    )
    for line in breaches:
        print(f"  {line}")
    failed = bool(breaches) or (args.max_used_once is not None and share > args.max_used_once)
    return 0 if args.report else int(failed)


if __name__ == "__main__":
    sys.exit(main())
