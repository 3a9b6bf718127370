"""Programs: the custom-op library, the statement forms, the typed IR, its seeded
generation and its lowering to Python, and where a program's ops come from (op
sources)."""
