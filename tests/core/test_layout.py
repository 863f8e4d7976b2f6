"""The layout of the package (dev/HELPERS.md): audit/ holds the front door and one
subpackage per stage of the data flow, nothing else, so new code lands in its stage."""

from __future__ import annotations

from pathlib import Path

import audit

PACKAGE = Path(audit.__file__).resolve().parent

STAGES = {
    "core",
    "sitemap",
    "rules",
    "http",
    "checks",
    "pipeline",
    "features",  # what an option adds to a run: hooks that see a RunContext
    "state",
    "migrate",
    "report",
    "cli",
    "cluster",  # --cluster: the URL checks on Dask workers
    "fix",  # `fix`: the sitemap set a complete audit says the site should have
    "fixtures",  # the fixture and demo site server
    "front",  # what the front door (api.py) wires around a run: run options, state, after
}
# __init__ (names loaded on first use), __main__ (`python -m audit`), api (the front door)
TOP_MODULES = {"__init__.py", "__main__.py", "api.py"}
SMALL = 100  # lines: the package's __init__ and __main__ only point elsewhere


def _listing() -> list[Path]:
    return [p for p in PACKAGE.iterdir() if p.name != "__pycache__" and not p.name.startswith(".")]


def test_the_top_level_holds_only_the_front_door_and_the_stages() -> None:
    files = {p.name for p in _listing() if p.is_file()}
    folders = {p.name for p in _listing() if p.is_dir()}
    assert files == TOP_MODULES, f"unexpected at audit/ top level: {sorted(files - TOP_MODULES)}"
    assert folders == STAGES, f"unexpected subpackages: {sorted(folders ^ STAGES)}"


def test_every_stage_is_a_package() -> None:
    missing = sorted(name for name in STAGES if not (PACKAGE / name / "__init__.py").is_file())
    assert not missing, f"no __init__.py in {missing}"


def test_the_package_init_and_main_stay_small() -> None:
    for name in ("__init__.py", "__main__.py"):
        lines = len((PACKAGE / name).read_text(encoding="utf-8").splitlines())
        assert lines <= SMALL, f"audit/{name} has {lines} lines; code belongs in a stage"


def test_features_and_everything_outside_the_pipeline_never_import_the_auditor() -> None:
    """Features see a RunContext (audit.pipeline.context); the Auditor is the pipeline's
    own (an import-linter contract says so too; this names the files)."""
    wrong = sorted(
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if path.parent.name != "pipeline"
        and "audit.pipeline.auditor" in path.read_text(encoding="utf-8")
    )
    assert not wrong, f"import the Auditor: {wrong}"


def test_the_readme_names_every_feature_module() -> None:
    """The README's architecture block lists each module of audit/features/ (a new
    feature is named where a newcomer looks for it)."""
    readme = (PACKAGE.parent / "README.md").read_text(encoding="utf-8")
    block = readme.split("  features/", 1)[1].split("\n  state/", 1)[0]
    words = set(block.replace(",", " ").replace("(", " ").split())
    modules = {p.stem for p in (PACKAGE / "features").glob("*.py") if p.stem != "__init__"}
    missing = sorted(modules - words)
    assert not missing, f"README.md's architecture does not name features/{missing}"
