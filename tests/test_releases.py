"""A bug's history over releases: introduced, fixed, regression; ``error`` is never
read as "not present", and a change is read only between adjacent judged releases."""

import pytest

from fuzzer.corpus.releases import ERROR, FIXED, REPRODUCES, by_release, history, release


def test_releases_order_as_numbers_and_builds_of_one_release_merge():
    assert release("2.11.0+cu130") == (2, 11, 0) and release("2.9.1") < release("2.11.0")
    assert release("nightly") is None
    assert by_release({"2.14.1": FIXED, "2.11.0+cu130": REPRODUCES, "2.11.0": FIXED, "2.9.0": ERROR}) == [
        ("2.9.0", ERROR), ("2.11.0", REPRODUCES), ("2.14.1", FIXED)]


@pytest.mark.parametrize("versions, introduced, regression, fixed", [
    ({"2.11.0": REPRODUCES, "2.12.1": REPRODUCES, "2.13.0": REPRODUCES, "2.14.1": FIXED}, "2.11.0", False, "2.14.1"),
    ({"2.11.0": FIXED, "2.12.1": REPRODUCES, "2.13.0": REPRODUCES, "2.14.1": REPRODUCES}, "2.12.1", True, None),
    # an error is not "not present": no regression can be read from it
    ({"2.11.0": ERROR, "2.12.1": REPRODUCES, "2.13.0": REPRODUCES}, "2.12.1", False, None),
    # nor across one: the bug may hide behind what 2.12.1 failed on, nor is 2.14.1 a fix
    ({"2.11.0": FIXED, "2.12.1": ERROR, "2.13.0": REPRODUCES, "2.14.1": ERROR}, "2.13.0", False, None),
    ({"2.11.0": REPRODUCES, "2.12.1": ERROR, "2.13.0": FIXED}, "2.11.0", False, None),
    ({"2.11.0": REPRODUCES, "2.12.1": FIXED, "2.13.0": REPRODUCES, "2.14.1": FIXED}, "2.11.0", False, "2.14.1"),
    ({"2.13.0": FIXED, "2.14.1": FIXED}, None, False, None),
])
def test_history(versions, introduced, regression, fixed):
    h = history(versions)
    assert (h.introduced, h.regression, h.fixed) == (introduced, regression, fixed)
    line = h.line()
    assert ("a regression in" in line) == regression


@pytest.mark.parametrize("versions, line", [
    ({"2.11.0": FIXED, "2.12.1": ERROR, "2.13.0": ERROR, "2.14.1": REPRODUCES},
     "not seen in 2.11.0; 2.12.1 and 2.13.0 could not judge it; reproduces in 2.14.1; "
     "not fixed in any release tried"),
    ({"2.11.0": ERROR, "2.12.1": REPRODUCES, "2.13.0": ERROR, "2.14.1": FIXED},
     "since 2.12.1 or earlier (2.11.0 could not judge it); 2.13.0 could not judge it; not seen in 2.14.1"),
    ({"2.11.0": REPRODUCES, "2.12.1": ERROR, "2.13.0": ERROR},
     "since 2.11.0 or earlier; 2.12.1 and 2.13.0 could not judge it; not fixed in any release judged"),
    ({"2.11.0": FIXED, "2.12.1": REPRODUCES, "2.13.0": FIXED},
     "a regression in 2.12.1 (2.11.0 is fixed); fixed in 2.13.0"),
])
def test_across_releases_that_could_not_judge_it_the_line_says_what_was_seen(versions, line):
    """The table's history column: across ``error`` it was once "a regression in 2.14.1"."""
    assert history(versions).line() == line


def test_a_regressions_report_says_so_in_its_title_and_first_line():
    from fuzzer.corpus.bugs import group
    from fuzzer.render import report
    from test_corpus import make_entry

    entry = make_entry()
    entry.versions = {"2.11.0": FIXED, "2.12.1": REPRODUCES}
    (bug,) = group([entry])
    text = report.render(bug, entry, "full.py")
    title, _, _, _, first = text.splitlines()[:5]
    assert title.startswith("# [regression 2.12.1]")
    assert first.startswith("A regression: torch 2.11.0 runs this program right, 2.12.1 does not.")
    assert "- History: a regression in 2.12.1 (2.11.0 is fixed)" in text
