"""A fixture notebook written the way Jupyter writes one: code, markdown and raw cells, and
stream, error, rich and image outputs."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
"""A real 1x1 PNG."""


def cell(kind: str, source: str, cell_id: str, **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"cell_type": kind, "id": cell_id, "metadata": {}}
    base["source"] = source.splitlines(keepends=True)
    if kind == "code":
        base |= {"execution_count": extra.pop("count", None), "outputs": extra.pop("outputs", [])}
    return base | extra


def fixture_cells() -> list[dict[str, Any]]:
    png = base64.b64encode(PNG).decode("ascii")
    return [
        cell("markdown", "# Title\nSome *notes*.", "md-1"),
        cell(
            "code",
            "print('hello')\nx = 1",
            "code-2",
            count=1,
            outputs=[{"name": "stdout", "output_type": "stream", "text": ["hello\n"]}],
        ),
        cell(
            "code",
            "1 / 0",
            "code-3",
            count=2,
            outputs=[
                {
                    "ename": "ZeroDivisionError",
                    "evalue": "division by zero",
                    "output_type": "error",
                    "traceback": [
                        "\x1b[0;31m---------------------------------------------\x1b[0m",
                        "\x1b[0;31mZeroDivisionError\x1b[0m: division by zero",
                    ],
                }
            ],
        ),
        cell(
            "code",
            "plot()",
            "code-4",
            count=3,
            outputs=[
                {
                    "data": {"image/png": png, "text/plain": ["<Figure size 640x480>"]},
                    "metadata": {},
                    "output_type": "display_data",
                },
                {
                    "data": {"text/plain": ["42"]},
                    "execution_count": 3,
                    "metadata": {},
                    "output_type": "execute_result",
                },
            ],
        ),
        cell("raw", "raw text", "raw-5"),
    ]


def notebook_bytes(cells: list[dict[str, Any]] | None = None, minor: int = 5) -> bytes:
    notebook = {
        "cells": fixture_cells() if cells is None else cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python", "version": "3.12.0"},
        },
        "nbformat": 4,
        "nbformat_minor": minor,
    }
    return (json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()


def write_notebook(path: Path, cells: list[dict[str, Any]] | None = None) -> bytes:
    data = notebook_bytes(cells)
    path.write_bytes(data)
    return data
