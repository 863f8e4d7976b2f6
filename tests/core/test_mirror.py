"""The tests mirror the package (dev/HELPERS.md): every module of audit/ with real code has a
test file of its own name, so a newcomer finds a module's tests without searching.

The mapping keeps the module's path under tests/ and puts `test_` before its name:

    audit/<m>.py                 -> tests/test_<m>.py
    audit/<sub>/<m>.py           -> tests/<sub>/test_<m>.py
    audit/<sub>/<pkg>/<m>.py     -> tests/<sub>/<pkg>/test_<m>.py   (a nested package: its path)
    audit/<sub>/__init__.py      -> tests/<sub>/test_<sub>.py       (a package's own code)

Real code is a function or class defined at the module's top level. A module of imports and
constants (a re-export, `__main__`) needs no file of its own, nor does a module-level
`__getattr__` or `__dir__` (names loaded on first use). The test file must hold at least one
test. More files per module are welcome (`test_<m>_<topic>.py`); scenario runs stay in
tests/scenarios/.

The modules are read from disk when the test runs, so a module added, moved or split is
judged as it is. NOT_YET lists the modules still without their file; it may only shrink: a
listed module that has its file now, or is gone, fails the test until it is struck off.
"""

from __future__ import annotations

import ast
from pathlib import Path

import audit

PACKAGE = Path(audit.__file__).resolve().parent
TESTS = Path(__file__).resolve().parents[1]
LAZY = {"__getattr__", "__dir__"}  # a package's names loaded on first use: re-exports

# Modules still without a test file of their own name (paths relative to audit/). Strike a
# module off when its file lands; never add one (write its tests instead).
NOT_YET: frozenset[str] = frozenset({})


def has_real_code(path: Path) -> bool:
    """A function or class defined at the top level, other than a lazy re-export."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    defined = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return any(isinstance(node, defined) and node.name not in LAZY for node in tree.body)


def mirror_of(module: Path, package: Path, tests: Path) -> Path:
    """The test file a module of `package` must have under `tests` (see the module docstring)."""
    rel = module.relative_to(package)
    folder = rel.parent
    name = folder.name if rel.name == "__init__.py" else rel.stem
    return tests / folder / f"test_{name}.py"


def holds_a_test(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        is_def = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        if is_def and node.name.lower().startswith("test"):
            return True
    return False


def unmirrored(package: Path, tests: Path) -> dict[str, str]:
    """Each module with real code whose test file is missing or holds no test: module path
    (relative to the package) -> the test file it needs (relative to `tests`' parent)."""
    missing: dict[str, str] = {}
    for module in sorted(package.rglob("*.py")):
        if "__pycache__" in module.parts or not has_real_code(module):
            continue
        test = mirror_of(module, package, tests)
        if not (test.is_file() and holds_a_test(test)):
            missing[module.relative_to(package).as_posix()] = test.relative_to(
                tests.parent
            ).as_posix()
    return missing


def test_every_module_with_real_code_has_a_test_file_of_its_own_name() -> None:
    missing = unmirrored(PACKAGE, TESTS)
    new = {module: test for module, test in missing.items() if module not in NOT_YET}
    assert not new, "modules of audit/ without their test file:\n" + "\n".join(
        f"  audit/{module} -> {test}" for module, test in sorted(new.items())
    )


def test_the_not_yet_list_only_shrinks() -> None:
    missing = unmirrored(PACKAGE, TESTS)
    done = sorted(module for module in NOT_YET if module not in missing)
    assert not done, f"strike these off NOT_YET (their test file exists, or they are gone): {done}"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_the_rule_on_a_package_of_its_own(tmp_path: Path) -> None:
    """The checker itself, on real files: what counts as code, the mapping, an empty file."""
    pkg, tests = tmp_path / "pkg", tmp_path / "tests"
    _write(pkg / "__init__.py", "def __getattr__(name):\n    return name\n")  # lazy only
    _write(pkg / "__main__.py", "from pkg.cli import main\n\nmain()\n")  # no definition
    _write(pkg / "front.py", "def crawl():\n    return 1\n")
    _write(pkg / "core" / "__init__.py", "from pkg.core.records import Entry\n")
    _write(pkg / "core" / "records.py", "class Entry:\n    pass\n")
    _write(pkg / "core" / "limits.py", "LIMIT = 50_000\n")  # constants only
    _write(pkg / "report" / "__init__.py", "async def write():\n    pass\n")
    _write(pkg / "report" / "html" / "page.py", "def page():\n    pass\n")
    _write(pkg / "report" / "text.py", "def text():\n    pass\n")
    _write(tests / "core" / "test_records.py", "def test_entry():\n    assert True\n")
    _write(tests / "report" / "test_text.py", "X = 1\n")  # a file without a test
    assert unmirrored(pkg, tests) == {
        "front.py": "tests/test_front.py",
        "report/__init__.py": "tests/report/test_report.py",
        "report/html/page.py": "tests/report/html/test_page.py",
        "report/text.py": "tests/report/test_text.py",
    }
    _write(tests / "test_front.py", "async def test_crawl():\n    pass\n")
    _write(tests / "report" / "test_report.py", "class TestWrite:\n    pass\n")
    _write(tests / "report" / "html" / "test_page.py", "def test_page():\n    pass\n")
    _write(tests / "report" / "test_text.py", "def test_text():\n    pass\n")
    assert unmirrored(pkg, tests) == {}
