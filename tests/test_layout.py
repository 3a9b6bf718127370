"""The package's shape: folders are the pipeline, modules import without cycles,
and README's module table names exactly the modules that exist."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "fuzzer"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in PACKAGE.rglob("*.py")}


def imports_of(path: Path, known: set[str]) -> set[str]:
    """Every package module ``path`` imports, at the top or inside a function:
    an import deferred into a function still closes a cycle."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                found.add(candidate if candidate in known else node.module)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return {m for m in found if m in known and m != "fuzzer"}


def graph() -> dict[str, set[str]]:
    mods = modules()
    return {name: imports_of(path, set(mods)) - {name} for name, path in mods.items()}


def cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, as the list of modules around it, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_package_has_no_import_cycle():
    assert cycle(graph()) is None, " -> ".join(cycle(graph()))


def test_the_cycle_finder_finds_a_cycle_through_a_deferred_import(tmp_path):
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycle(edges) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from fuzzer.judge import trial\n")
    assert imports_of(module, {"fuzzer.judge.trial", "fuzzer.judge"}) == {"fuzzer.judge.trial"}


def test_readme_module_table_matches_the_tree():
    readme = (ROOT / "README.md").read_text()
    table = readme.split("## How it works", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"`(fuzzer/[\w/]+\.py)`", table))
    listed |= {f"{folder}/" for folder in re.findall(r"`(fuzzer/\w+)/`", table)}
    on_disk = {str(p.relative_to(ROOT)) for p in PACKAGE.rglob("*.py")
               if p.name != "__init__.py" and p.name != "__main__.py"}
    folders = {m for m in listed if m.endswith("/")}
    missing = {m for m in on_disk - listed if not any(m.startswith(f) for f in folders)}
    assert missing == set(), "modules missing from README's table"
    assert {m for m in listed if m.endswith(".py")} - on_disk == set(), "README names modules that do not exist"
