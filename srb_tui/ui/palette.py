"""Colours for Rich text, taken from the active Textual theme (never hard-coded)."""

from __future__ import annotations

from typing import Literal

from textual.app import App
from textual.color import Color, ColorParseError

Tone = Literal["ok", "warn", "bad", "muted", "accent"]
_VARIABLE: dict[Tone, str] = {
    "ok": "success",
    "warn": "warning",
    "bad": "error",
    "muted": "foreground-muted",
    "accent": "accent",
}


def tone(app: App[object], kind: Tone, *, bold: bool = False) -> str:
    """A Rich style string in the theme's colour for ``kind``."""
    variables = app.theme_variables
    raw = variables.get(_VARIABLE[kind]) or variables.get("foreground", "")
    try:
        colour = Color.parse(raw)
        if colour.a < 1:
            colour = Color.parse(variables.get("background", "#000000")) + colour
        text = colour.hex6
    except ColorParseError:
        text = ""
    return f"bold {text}".strip() if bold else text
