"""The README's architecture section and the data-flow page (docs/dataflow.md) stay in step
with the package: every module is named under its subpackage in the README, every
subpackage in the data-flow page, and neither names a subpackage that is gone."""

from __future__ import annotations

import re
from pathlib import Path

import audit

PACKAGE = Path(audit.__file__).resolve().parent
ROOT = PACKAGE.parent
README = ROOT / "README.md"
DATAFLOW = ROOT / "docs" / "dataflow.md"


def _architecture_block() -> str:
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Architecture\n", 1)[1].split("\n## ", 1)[0]
    return section.split("```", 2)[1]


def _paragraphs(block: str) -> dict[str, str]:
    """Each `name/` heading of the block with the text up to the next heading."""
    found: dict[str, str] = {}
    current = ""
    for line in block.splitlines():
        match = re.match(r"^  (\w+)/\s", line)
        if match:
            current = match.group(1)
            found[current] = ""
        if current:
            found[current] += line + "\n"
    return found


def _subpackages() -> list[Path]:
    return sorted(p for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())


def _modules(sub: Path) -> list[str]:
    """The modules of a subpackage, a nested package named as `package/module`."""
    names = []
    for file in sorted(sub.rglob("*.py")):
        if file.name == "__init__.py" or "__pycache__" in file.parts:
            continue
        names.append(file.relative_to(sub).with_suffix("").as_posix())
    return names


def test_the_readme_names_every_module_under_its_subpackage() -> None:
    paragraphs = _paragraphs(_architecture_block())
    missing = []
    for sub in _subpackages():
        text = paragraphs.get(sub.name, "")
        if not text:
            missing.append(f"{sub.name}/ (no paragraph)")
            continue
        for module in _modules(sub):
            word = module.rsplit("/", 1)[-1]
            if not re.search(rf"(?<![\w.]){re.escape(word)}(?!\w)", text):
                missing.append(f"{sub.name}/{module}.py")
    assert not missing, f"README's Architecture does not name: {missing}"


def test_the_readme_names_no_subpackage_that_is_gone() -> None:
    named = set(_paragraphs(_architecture_block()))
    present = {p.name for p in _subpackages()}
    assert named <= present, f"README's Architecture names missing subpackages: {named - present}"


def test_the_data_flow_page_walks_every_subpackage_in_numbered_steps() -> None:
    text = DATAFLOW.read_text(encoding="utf-8")
    steps = re.findall(r"^(\d+)\. ", text, flags=re.M)
    assert steps == [str(n) for n in range(1, len(steps) + 1)], "steps numbered 1, 2, 3, ..."
    assert len(steps) >= 8
    for sub in _subpackages():
        assert f"`audit/{sub.name}/" in text or f"`{sub.name}/" in text, (
            f"docs/dataflow.md does not say where {sub.name}/ comes in"
        )
    for match in re.findall(r"`audit/([\w/]+)\.py`", text):
        assert (PACKAGE / f"{match}.py").is_file(), f"docs/dataflow.md names audit/{match}.py"
