"""Trial kinds that plug into ``fuzzer.judge.kinds``: the plain one, a program compiled
once in this process."""
