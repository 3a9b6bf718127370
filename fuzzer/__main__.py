"""``python -m fuzzer`` is the same as the ``dcefuzz`` console script."""

from fuzzer.cli import entry

if __name__ == "__main__":
    entry()
