"""Where a dying process was (``fuzzer.isolation.stacks``): the working thread's stack
read from a faulthandler dump, and its innermost frame of torch; hand-written dumps."""

import os

from fuzzer.isolation import stacks

PACKAGE = stacks._PACKAGE
TORCH = "/venv/lib/python3.11/site-packages/torch/"

DUMP = f'''Fatal Python error: Segmentation fault

Thread 0x00007f01 (most recent call first):
  File "/usr/lib/python3.11/threading.py", line 320 in wait
  File "/usr/lib/python3.11/threading.py", line 1002 in _bootstrap_inner

Current thread 0x00007f00 (most recent call first):
  File "{TORCH}_inductor/scheduler.py", line 812 in compute_ancestors
  File "{TORCH}_inductor/graph.py", line 90 in codegen
  File "{PACKAGE}judge/execute.py", line 170 in run_compiled
  File "/work/run.py", line 3 in <module>
'''


def test_the_working_threads_stack_is_read_innermost_first_with_short_paths(tmp_path):
    path = tmp_path / "stack.txt"
    path.write_text(DUMP)
    frames = stacks.read(path)
    assert frames[0] == "compute_ancestors (torch/_inductor/scheduler.py:812)"
    assert "run_compiled (fuzzer/judge/execute.py:170)" in frames
    assert stacks.read(tmp_path / "missing.txt") == [] and stacks.read(path.parent / "x") == []


def test_the_key_is_the_innermost_frame_of_torch_without_its_line():
    frames = ["sizes (fuzzer/program/sizes.py:12)", "compute_ancestors (torch/_inductor/scheduler.py:812)"]
    assert stacks.torch_frame(frames) == "compute_ancestors (torch/_inductor/scheduler.py)"
    assert stacks.innermost(frames) == "sizes (fuzzer/program/sizes.py)"
    assert stacks.torch_frame(frames[:1]) is None and stacks.innermost([]) == ""


def test_a_file_is_shown_by_its_path_in_torch_or_dcefuzz_else_its_name():
    assert stacks.shown(f"{TORCH}fx/graph.py") == "torch/fx/graph.py"
    assert stacks.shown(os.path.join(PACKAGE, "cli", "app.py")) == "fuzzer/cli/app.py"
    assert stacks.shown("/tmp/somewhere/script.py") == "script.py"
