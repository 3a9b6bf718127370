"""Refuse Inductor compiles in the fast test tier, in pytest's process and its children.

``tests/conftest.py`` puts this folder first on ``PYTHONPATH`` when a run leaves out the
``compile`` marker (``-m "not compile and not slow"``), so every Python process the tests
start imports it at start-up, and calls :func:`install` itself.  From then on
``torch._inductor.compile_fx.compile_fx`` (Inductor's entry point, which the ``inductor``
backend imports when it is called) raises, and first leaves a file naming the test that
asked for it in the folder ``$DCEFUZZ_NO_INDUCTOR``: the fuzzer may catch the error and
judge it (a crash, its own error), but conftest reads the folder after each test and
fails the test that compiled, so a missing ``@pytest.mark.compile`` cannot pass unseen.
"""

from __future__ import annotations

import importlib.abc
import os
import sys
import uuid

#: the folder each refused compile leaves a file in; unset: this module does nothing
ENV = "DCEFUZZ_NO_INDUCTOR"
MODULE = "torch._inductor.compile_fx"


def current_test() -> str:
    """The test running now: pytest sets ``PYTEST_CURRENT_TEST`` and children inherit it."""
    return os.environ.get("PYTEST_CURRENT_TEST", "an unknown test").rsplit(" (", 1)[0]


def refuse(*args, **kwargs):
    test = current_test()
    folder = os.environ.get(ENV)
    if folder:
        with open(os.path.join(folder, uuid.uuid4().hex), "w") as f:
            f.write(test)
    raise RuntimeError(f"an Inductor compile in the fast tier, from {test}: "
                       "mark it @pytest.mark.compile")


def _patch(module) -> None:
    module.compile_fx = refuse


class _Finder(importlib.abc.MetaPathFinder):
    """Patches the module right after it is first executed.  This file may be loaded
    twice in one process, as ``sitecustomize`` at start-up and by conftest under another
    name (a pytest-xdist worker starts with the folder on ``PYTHONPATH``): a finder is
    known by its ``refuses_inductor`` mark, not its class, so two never ask each other."""

    refuses_inductor = True

    def find_spec(self, name, path=None, target=None):
        if name != MODULE:
            return None
        for finder in sys.meta_path:
            if getattr(finder, "refuses_inductor", False) or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        execute = spec.loader.exec_module

        def exec_module(module):
            execute(module)
            _patch(module)

        spec.loader.exec_module = exec_module
        return spec


def install() -> None:
    if MODULE in sys.modules:
        _patch(sys.modules[MODULE])
    elif not any(getattr(f, "refuses_inductor", False) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())


if os.environ.get(ENV):
    install()
