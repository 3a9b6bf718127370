"""Feedback-directed generation: campaigns that learn which programs reach new
compiler behaviour.

``fuzzer.judge.compiler_signal`` reads what the compiler did with each program; here the
parent of a campaign keeps the programs that did something rare (``pool``), makes
new ones from them by small edits of the IR (``mutate``) as well as fresh, and
splits its programs between the ways of making them, and fresh programs' features,
by what has been paying (``schedule``); ``director`` is the parent's side of it all.
"""
