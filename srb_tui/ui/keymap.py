"""The user keymap (``<state>/keymap.toml``: ``binding-id = "key[,key]"``), checked against
every binding the console has: an unknown id is named with a did-you-mean, a key that
takes over another binding's key (``"app.quit" = "t"`` over ``app.tasks``) is named."""

from __future__ import annotations

import importlib
import inspect
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from textual.binding import Binding

from srb_tui.schema.suggest import suggest

# Every module of the console that declares bindings (the App's own are "app").
BINDING_MODULES = (
    "srb_tui.ui.app", "srb_tui.ui.screens.tasks", "srb_tui.ui.screens.runs",
    "srb_tui.ui.screens.run", "srb_tui.ui.screens.run_compare",
    "srb_tui.ui.screens.run_dialogs", "srb_tui.ui.screens.campaign",
    "srb_tui.ui.screens.reports", "srb_tui.ui.screens.launch", "srb_tui.ui.screens.diff",
    "srb_tui.ui.screens.counterexamples", "srb_tui.ui.screens.nodes",
    "srb_tui.ui.screens.strength", "srb_tui.ui.widgets.behavioural_pane",
)


@dataclass(frozen=True)
class KnownBinding:
    """A binding the console declares: its id, default keys and the class that owns it."""

    id: str
    keys: tuple[str, ...]
    owner: str
    app_wide: bool


def split_keys(keys: str) -> tuple[str, ...]:
    return tuple(k.strip() for k in keys.split(",") if k.strip())


def known_bindings(modules: Iterable[str] = BINDING_MODULES) -> dict[str, KnownBinding]:
    """Every binding with an id in ``modules``' classes (each class's own BINDINGS)."""
    from textual.app import App

    found: dict[str, KnownBinding] = {}
    for name in modules:
        module = importlib.import_module(name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != name or "BINDINGS" not in vars(cls):
                continue
            for binding in vars(cls)["BINDINGS"]:
                if isinstance(binding, Binding) and binding.id:
                    found[binding.id] = KnownBinding(binding.id, split_keys(binding.key),
                                                     cls.__name__, issubclass(cls, App))
    return found


def keymap_problems(keymap: Mapping[str, str], known: Mapping[str, KnownBinding]) -> list[str]:
    """Unknown ids (with a did-you-mean) and keys that shadow another binding's."""
    problems: list[str] = []
    for binding_id in keymap:
        if binding_id not in known:
            hint = suggest(binding_id, known)
            problems.append(f"unknown binding `{binding_id}`"
                            + (f" (did you mean `{hint}`?)" if hint else ""))
    effective = {b.id: split_keys(keymap[b.id]) if b.id in keymap else b.keys
                 for b in known.values()}
    for binding_id, value in keymap.items():
        mine = known.get(binding_id)
        if mine is None:
            continue
        for other in known.values():
            if other.id == binding_id:
                continue
            same_scope = other.owner == mine.owner or other.app_wide or mine.app_wide
            # only keys the user gave it: the defaults' own overlaps are by design
            taken = (set(split_keys(value)) - set(mine.keys)) & set(effective[other.id])
            if same_scope and taken:
                problems.append(f"`{binding_id}` = \"{value}\" shadows `{other.id}` (key "
                                f"{', '.join(sorted(taken))})")
    return problems


def read_keymap(path: Path) -> tuple[dict[str, str], str | None]:
    """Read a user keymap; a broken file is reported, never fatal. Unknown ids are left
    out; a shadowing binding is applied and named."""
    if not path.exists():
        return {}, None
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return {}, f"{path}: not read ({exc}); default keys kept"
    keymap: dict[str, str] = {}
    bad: list[str] = []
    for key, value in data.items():
        if isinstance(value, str) and value.strip():
            keymap[key] = value
        else:
            bad.append(key)
    problems = [f"ignored {', '.join(bad)} (value must be a key string)"] if bad else []
    known = known_bindings()
    problems += keymap_problems(keymap, known)
    keymap = {k: v for k, v in keymap.items() if k in known}
    return keymap, f"{path}: " + "; ".join(problems) if problems else None
