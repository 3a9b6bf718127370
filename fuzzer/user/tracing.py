"""The effect log of a user's ORDERED op, kept as source text.

dcefuzz's own ops call ``_hit`` from their bodies; a user's op cannot be edited.  Its
calls are seen instead at the dispatcher: the kernel it would run on each device is
looked up (``torch.library.get_kernel``) and a kernel that logs the call, then runs
that one, is registered over it.  Compiled code calls a custom op through the
dispatcher too, so eager and compiled runs log alike.  Only effectful ops are logged:
the effect clause is the only one that reads the log (the others compare values).

A user's op takes no call-site argument, so its events carry no site (``None``); the
effect clause then compares the sequence of op names and the values each call saw.
The text is executed in the op library's namespace (``_hit`` and ``TRACE`` come from
``custom_ops.HEADER``) and pasted into repro scripts, like the op snippets.
"""

from __future__ import annotations

SOURCE = '''\
_TRACED = {}


def _trace_effects(qualnames):
    """Log every call of each named ORDERED op, eager or compiled, into TRACE."""
    import warnings

    for qualname in qualnames:
        if qualname in _TRACED:
            continue
        namespace, name = qualname.split("::")
        library = torch.library.Library(namespace, "IMPL")
        devices = ["CPU"] + (["CUDA"] if torch.cuda.is_available() else [])
        for key in devices:
            if not torch._C._dispatch_has_computed_kernel_for_dispatch_key(qualname, key):
                continue
            kernel = torch.library.get_kernel(qualname, key)

            def logged(keyset, *args, _kernel=kernel, _op=qualname, **kwargs):
                tensors = [t for a in args for t in (a if isinstance(a, (list, tuple)) else [a])
                           if isinstance(t, torch.Tensor)]  # a Tensor[]'s elements too
                _hit(_op, None, *tensors, effect=True)
                return _kernel.call_boxed(keyset, *args, **kwargs)

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "Overriding a previously registered kernel"
                library.impl(name, logged, key, with_keyset=True)
        _TRACED[qualname] = library
'''


def supported() -> bool:
    """Whether this torch can look a kernel up to wrap it (``torch.library.get_kernel``)."""
    import torch

    return hasattr(torch.library, "get_kernel")


def trace_effects(qualnames) -> None:
    """Log the named ops' calls in this process's op library trace."""
    from fuzzer.program import custom_ops

    lib = custom_ops.install()
    if "_trace_effects" not in lib.__dict__:
        exec(compile(SOURCE, "<dcefuzz user-op tracing>", "exec"), lib.__dict__)  # noqa: S102 - our own text
    lib._trace_effects(list(qualnames))


def script_source(program, brief: bool = False) -> str:
    """What a repro script needs of a program's user ops: their modules imported from
    the folders the fuzzer imported them from, and the effectful ones logged
    (empty when the program calls none).  ``brief``: the folder as it is here, in
    two lines (a brief repro is read, then run where it was written)."""
    import os

    from fuzzer.program import forms
    from fuzzer.user import values

    if not program.imports:
        return ""
    lines = ["import importlib", "import os", "import sys", "",
             "# the user's custom ops, imported by path as the fuzzer imported them: the folder",
             "# as recorded (relative: to the working directory, or to the project this script's",
             "# corpus folder sits in), else where it was when this script was written"]
    if brief:
        lines = ["import sys", ""]
        for module, folder, *_ in program.imports:
            lines += [f"sys.path.insert(0, {os.path.abspath(folder)!r})", f"import {module}"]
    for module, folder, *_ in () if brief else program.imports:
        here = os.path.abspath(folder)
        lines += [(f"_found = [p for p in ({folder!r}, os.path.join(os.path.dirname(os.path.abspath(__file__)), "
                   f"'..', {folder!r}), {here!r}) if os.path.isdir(p)]"),
                  f"sys.path.insert(0, os.path.abspath(_found[0]) if _found else {here!r})",
                  f"importlib.import_module({module!r})"]
    bound = values.import_lines(values.texts_in(program))
    if bound:  # the names its value objects are written with, as their module has them
        lines += ([] if not brief else ["import importlib"]) + bound
    effectful = [q for q in program.user_ops() if forms.form(q).is_effectful]
    text = "\n".join(lines) + "\n"
    if effectful:
        text += "\n\n" + SOURCE + f"\n\n_trace_effects({effectful!r})\n"
    return text
