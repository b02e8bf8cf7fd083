"""Where tuning results live (`<output.path>/_tuning/<grid>/`) and reading them back: what the why-report and the
tuning DAG read, apart from the runner that writes them."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..layout import TUNING_FOLDER, TUNING_JSON_FILE


def read_results(output_path: str | Path) -> list[dict[str, Any]]:
    """Every tuning result under `<output_path>/_tuning/` (tuning.json), by name."""
    root = Path(output_path, TUNING_FOLDER)
    out = []
    for f in sorted(root.glob(f"*/{TUNING_JSON_FILE}")) if root.is_dir() else []:
        if f.parent.name.startswith("."):
            continue
        try:
            out.append({**json.loads(f.read_text()), "folder": f.parent.name})
        except (OSError, ValueError):
            continue
    return out
