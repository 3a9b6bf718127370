"""``python -m fuzzer`` is the same as the ``dcefuzz`` console script."""

from fuzzer.cli import main

if __name__ == "__main__":
    main()
