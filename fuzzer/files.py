"""Our JSON files: written atomically (a reader, or a crash, never sees half a file),
read with one error for each way a file can be unusable."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, fsync it, then rename it over."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def read_json(path: Path, error: type[Exception], missing: str = "no such file"):
    """The JSON in ``path``; ``error(f"{path}: {missing}")`` if there is no such file,
    ``error(f"{path}: not readable JSON (...)")`` if it cannot be read or parsed."""
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise error(f"{path}: {missing}") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise error(f"{path}: not readable JSON ({exc})") from exc
