"""The package's shape: the stages import one way (import-linter's contracts, in
pyproject.toml), README's module table names exactly the modules that exist, no
function is over its size, and identities are parsed only where they are read."""

import ast
import re
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "fuzzer"


def test_the_stages_import_one_way_and_no_stage_has_a_module_cycle():
    """Layers (each stage imports only those below it), no stage importing the public
    entry points, and no import cycle among the modules of any stage: the contracts of
    pyproject.toml, run by import-linter (deferred imports count)."""
    from importlinter import cli

    exit_code = cli.lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True)
    assert exit_code == cli.EXIT_STATUS_SUCCESS, "lint-imports found a broken contract (run it for the report)"


def test_no_module_is_over_the_size_of_one_noun():
    """Modules stay one noun each: none over 450 lines, but the contract, whose clauses
    stay together (docs/layers.md)."""
    big = {str(p.relative_to(ROOT)): n for p in PACKAGE.rglob("*.py")
           if (n := len(p.read_text().splitlines())) > 450}
    assert set(big) <= {"fuzzer/judge/contract.py"}, big


def test_readme_module_table_matches_the_tree():
    readme = (ROOT / "README.md").read_text()
    table = readme.split("## How it works", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"`(fuzzer/[\w/]+\.py)`", table))
    listed |= {f"{folder}/" for folder in re.findall(r"`(fuzzer/[\w/]+)/`", table)}
    on_disk = {str(p.relative_to(ROOT)) for p in PACKAGE.rglob("*.py")
               if p.name != "__init__.py" and p.name != "__main__.py"}
    folders = {m for m in listed if m.endswith("/")}
    missing = {m for m in on_disk - listed if not any(m.startswith(f) for f in folders)}
    assert missing == set(), "modules missing from README's table"
    assert {m for m in listed if m.endswith(".py")} - on_disk == set(), "README names modules that do not exist"


@pytest.mark.parametrize("group", ["dcefuzz.trial_kinds", "dcefuzz.op_sources"])
def test_the_registries_find_what_pyproject_registers(group):
    """The stages below a registry find its plug-ins only through the entry points of
    the installed package: each declared one loads and says its name."""
    import tomllib
    from importlib.metadata import entry_points

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"][group]
    installed = {p.name: p for p in entry_points(group=group)}
    assert set(declared) <= set(installed), "reinstall the package: pip install -e ."
    for name in declared:
        assert installed[name].load().name == name


# ----------------------------------------------------------- module-named tests
#: the modules with logic that have no test file named after them yet (tests/README.md
#: says how one is named): this list only shrinks; a new module comes with its tests
WITHOUT_MODULE_TESTS: frozenset[str] = frozenset()


class Module(NamedTuple):
    """A module of the package: its path, its dotted name and its parts below ``fuzzer``
    as a test file is named by them (a package is its folder, a ``__main__`` is
    ``<package>_main``)."""

    path: str
    dotted: str
    parts: tuple[str, ...]


def _module(path: Path) -> Module:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    dotted = ".".join(("fuzzer", *parts)).removesuffix(".__init__")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    elif parts[-1] == "__main__":
        parts = (*parts[:-1], f"{parts[-2]}_main")
    return Module(str(path.relative_to(ROOT)), dotted, parts)


def _has_logic(path: Path) -> bool:
    """A module with a function or method; a bare ``__init__``, a table of constants
    or a record without methods has nothing of its own to test."""
    return any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in ast.walk(ast.parse(path.read_text())))


def modules_with_logic() -> list[Module]:
    return [_module(p) for p in sorted(PACKAGE.rglob("*.py")) if p != PACKAGE / "__init__.py" and _has_logic(p)]


def test_file_name(module: Module, modules: list[Module]) -> str:
    """``test_<module>.py``, or, where two modules (or a module and a package) share the
    name, ``test_<folder>_<module>.py``; a leading underscore is left out."""
    packages = {p.name for p in PACKAGE.rglob("*") if p.is_dir() and (p / "__init__.py").exists()}
    own = module.parts[-1]
    clash = sum(m.parts[-1] == own for m in modules) > 1 or (own in packages and len(module.parts) > 1
                                                            and not module.path.endswith("__init__.py"))
    return "test_" + "_".join(p.lstrip("_") for p in module.parts[-2 if clash else -1:]) + ".py"


test_file_name.__test__ = False  # a helper, not a test


def _imports(test_file: Path, dotted: str) -> bool:
    """Whether ``test_file`` imports the module ``dotted`` itself (``import a.b``,
    ``from a.b import x`` or ``from a import b``)."""
    parent, _, last = dotted.rpartition(".")
    for node in ast.walk(ast.parse(test_file.read_text())):
        if isinstance(node, ast.Import) and any(a.name == dotted or a.name.startswith(dotted + ".")
                                                for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module == dotted
                                                 or (node.module == parent and any(a.name == last
                                                                                   for a in node.names))):
            return True
    return False


def test_each_module_has_a_test_file_name_of_its_own():
    modules = modules_with_logic()
    names = [test_file_name(m, modules) for m in modules]
    assert len(set(names)) == len(names), "two modules map to one test file name"
    assert test_file_name(_module(PACKAGE / "cache" / "trial.py"), modules) == "test_cache_trial.py"
    assert test_file_name(_module(PACKAGE / "reduce" / "order.py"), modules) == "test_order.py"


def test_every_module_with_logic_has_a_test_file_named_after_it_that_imports_it():
    """A newcomer changing ``reduce/order.py`` finds the tests that pin it in
    ``tests/test_order.py``: every module with logic has one that imports it, but those
    still listed in WITHOUT_MODULE_TESTS, which may only shrink."""
    modules = modules_with_logic()
    without = set()
    for m in modules:
        test_file = ROOT / "tests" / test_file_name(m, modules)
        if not (test_file.exists() and _imports(test_file, m.dotted)):
            without.add(m.path)
    assert without - WITHOUT_MODULE_TESTS == set(), "modules with logic and no module-named test file (tests/README.md)"
    assert WITHOUT_MODULE_TESTS - without == set(), "these have module-named tests now: take them off the list"


#: the modules that read an identity's text back (a bug class, a signature): where it is
#: read from a file (an entry, a campaign's state, a script's ``SPEC``), and the records
#: themselves
IDENTITY_READERS = {"fuzzer/judge/identity.py", "fuzzer/reduce/signature.py", "fuzzer/corpus/entry.py",
                    "fuzzer/campaign/state.py", "fuzzer/render/driver.py"}


def test_an_identity_is_parsed_only_where_it_is_read():
    """A bug class, a signature or a key travels as its record: its text is parsed back
    (``BugClass.parse``, ``Signature.parse``) only where it is read from a file."""
    import ast

    parsed = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "parse"
                    and ast.unparse(node.func.value).split(".")[-1] in ("BugClass", "Signature", "BugKey")):
                parsed.add(str(path.relative_to(ROOT)))
    assert parsed <= IDENTITY_READERS, parsed - IDENTITY_READERS


#: the most lines a function in fuzzer/ may span (its ``def`` to its last line,
#: docstring included) and the most parameters it may take (``self`` and ``cls`` apart):
#: past them a function is two, or its parameters a record waiting to be named
MAX_FUNCTION_LINES = 60
MAX_PARAMETERS = 8
#: the functions over a limit, in modules another change is reworking (the forms'
#: tables): each leaves this list when that change makes it fit
OVERSIZED: set[str] = set()


def _oversized(path) -> set[str]:
    import ast

    over = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            named = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if x is not None]
            params = [name for name in named if name not in ("self", "cls")]
            if node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES or len(params) > MAX_PARAMETERS:
                over.add(f"{path.relative_to(ROOT)}:{node.name}")
    return over


def test_no_function_is_over_60_lines_or_8_parameters():
    """Every function in fuzzer/ fits the limits, but those ``OVERSIZED`` names, which
    must still be over them (a function that fits leaves the list)."""
    over = set().union(*(_oversized(p) for p in PACKAGE.rglob("*.py")))
    assert over - OVERSIZED == set(), "over 60 lines or 8 parameters"
    assert OVERSIZED - over == set(), "fits now: take it out of OVERSIZED"
