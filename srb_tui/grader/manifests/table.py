"""Problem-collecting reads of one parsed TOML document: the manifests' one reader.

Every manifest rule (``suite.toml``, ``scan.toml``, ``probe.toml`` here; ``task.toml`` and
``evaluation.toml`` on the host) reads its tables through :class:`Table`, which checks each
value's type, hands a sentence naming the dotted key to a :class:`Reporter` for anything
wrong and returns a usable default, so reading goes on and *every* problem is reported in
one pass. Standard library only: it runs on the host (where the reporter adds the file and
line) and inside a stage container with the grader (where it collects plain sentences).
"""

from __future__ import annotations

import datetime as _dt
import difflib
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import PurePosixPath
from types import MappingProxyType
from typing import Literal, Protocol, Self

ProblemKind = Literal["error", "absent", "warning"]


class Reporter(Protocol):
    """Where a :class:`Table` sends a problem: the dotted key and a sentence."""

    def report(self, key: str, message: str, kind: ProblemKind = "error") -> None: ...


class Collected:
    """A :class:`Reporter` that keeps ``key: message`` sentences (the grader's side)."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def report(self, key: str, message: str, kind: ProblemKind = "error") -> None:
        if kind == "error":
            self.problems.append(f"{key}: {message}" if key else message)


def join_path(parent: str, key: str) -> str:
    """The dotted path of ``key`` inside the table at ``parent``."""
    return f"{parent}.{key}" if parent else key


_NUMBER_TEXT = re.compile(r"[+-]?(\d[\d_]*)(\.\d+)?([eE][+-]?\d+)?")
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_LONG_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")

EMPTY: Mapping[str, object] = MappingProxyType({})


def is_token(value: str) -> bool:
    """An id usable in paths and file names: letters, digits, ``._-``, at most 64."""
    return _TOKEN.fullmatch(value) is not None


def is_inside(value: str) -> bool:
    """A non-empty relative path that does not climb out with ``..``."""
    path = PurePosixPath(value)
    return bool(value.strip()) and not path.is_absolute() and ".." not in path.parts


def freeze(value: object) -> object:
    """A read-only deep copy: tables become mapping proxies, arrays tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({str(k): freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    return value


def frozen_mapping(value: Mapping[str, object] | None) -> Mapping[str, object]:
    """:func:`freeze` for a table that may be absent."""
    if not value:
        return EMPTY
    return MappingProxyType({str(k): freeze(v) for k, v in value.items()})


def fmt_number(value: float) -> str:
    """``60.0`` → ``60``, ``0.5`` → ``0.5``."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def describe(value: object) -> str:
    """A short phrase naming a value's TOML type (and the value, when short)."""
    if isinstance(value, bool):
        return f"the boolean {'true' if value else 'false'}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f'the string "{shown}"'
    if isinstance(value, int):
        return f"the integer {value}"
    if isinstance(value, float):
        return f"the float {value}"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, Mapping):
        return "a table"
    if isinstance(value, _dt.date | _dt.time):
        return "a date/time"
    return type(value).__name__


class Table:
    """Checked reads from one TOML table at a dotted ``path``; problems go to ``source``."""

    def __init__(self, source: Reporter, path: str, data: Mapping[str, object]) -> None:
        self.source = source
        self.path = path
        self.data = data

    # -- bookkeeping -------------------------------------------------------------

    def key(self, name: str) -> str:
        return join_path(self.path, name)

    def report(self, name: str, message: str, kind: ProblemKind = "error") -> None:
        self.source.report(self.key(name) if name else self.path, message, kind)

    def has(self, name: str) -> bool:
        return name in self.data

    def raw(self, name: str) -> object | None:
        return self.data.get(name)

    def check_keys(
        self,
        known: Collection[str],
        *,
        what: str = "key",
        allow: Callable[[str], bool] | None = None,
    ) -> list[str]:
        """Report every key not in ``known`` (suggesting the closest known name).

        Keys for which ``allow`` returns true are passed over and returned, so a
        caller can treat them as free-form options.
        """
        extra: list[str] = []
        for name in self.data:
            if name in known:
                continue
            if allow is not None and allow(name):
                extra.append(name)
                continue
            self.report(name, f"unknown {what} `{name}`{did_you_mean(name, known)}")
        return extra

    def _missing(self, name: str, required: bool) -> None:
        if required:
            self.report(name, "required key is missing")

    # -- scalars -----------------------------------------------------------------

    def string(self, name: str, default: str = "", *, required: bool = False) -> str:
        value = self.optional_string(name, required=required)
        return default if value is None else value

    def optional_string(self, name: str, *, required: bool = False) -> str | None:
        if name not in self.data:
            self._missing(name, required)
            return None
        value = self.data[name]
        if isinstance(value, str):
            return value
        self.report(name, f"expected a string, found {describe(value)}")
        return None

    def boolean(self, name: str, default: bool, *, required: bool = False) -> bool:
        if name not in self.data:
            self._missing(name, required)
            return default
        value = self.data[name]
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            bare = value.strip().lower()
            self.report(
                name,
                f'expected a boolean, found the string "{value}" (write {bare} without quotes)',
            )
        else:
            self.report(name, f"expected a boolean, found {describe(value)}")
        return default

    def _number_value(self, name: str, value: object, *, integer: bool) -> float | int | None:
        expected = "an integer" if integer else "a number"
        if isinstance(value, bool):
            self.report(
                name,
                f"expected {expected}, found {describe(value)} (a boolean is not a number)",
            )
            return None
        if isinstance(value, int):
            return value
        if isinstance(value, float) and not integer:
            return value
        if isinstance(value, str) and _NUMBER_TEXT.fullmatch(value.strip()):
            self.report(
                name,
                f'expected {expected}, found the string "{value}" '
                f"(write {value.strip()} without quotes)",
            )
            return None
        self.report(name, f"expected {expected}, found {describe(value)}")
        return None

    def number(
        self,
        name: str,
        default: float,
        *,
        required: bool = False,
        positive: bool = False,
        minimum: float | None = None,
    ) -> float:
        """An integer or float; ``positive`` means > 0, ``minimum`` means ≥ it."""
        if name not in self.data:
            self._missing(name, required)
            return default
        value = self._number_value(name, self.data[name], integer=False)
        if value is None:
            return default
        if positive and not value > 0:
            self.report(name, f"must be greater than 0 (found {fmt_number(value)})")
            return default
        if minimum is not None and value < minimum:
            self.report(name, f"must be at least {fmt_number(minimum)} (found {fmt_number(value)})")
            return default
        return float(value)

    def integer(
        self, name: str, default: int, *, required: bool = False, minimum: int | None = None
    ) -> int:
        if name not in self.data:
            self._missing(name, required)
            return default
        value = self._number_value(name, self.data[name], integer=True)
        if value is None:
            return default
        as_int = int(value)
        if minimum is not None and as_int < minimum:
            self.report(name, f"must be at least {minimum} (found {as_int})")
            return default
        return as_int

    # -- containers --------------------------------------------------------------

    def string_list(
        self, name: str, *, required: bool = False, default: tuple[str, ...] = ()
    ) -> tuple[str, ...]:
        if name not in self.data:
            self._missing(name, required)
            return default
        value = self.data[name]
        if not isinstance(value, list):
            self.report(name, f"expected an array of strings, found {describe(value)}")
            return default
        items: list[str] = []
        for index, item in enumerate(value):
            if isinstance(item, str):
                items.append(item)
            else:
                self.source.report(
                    f"{self.key(name)}[{index}]", f"expected a string, found {describe(item)}"
                )
        return tuple(items)

    def table(self, name: str, *, required: bool = False) -> Self | None:
        if name not in self.data:
            self._missing(name, required)
            return None
        value = self.data[name]
        if isinstance(value, Mapping):
            return type(self)(self.source, self.key(name), value)
        self.report(name, f"expected a table, found {describe(value)}")
        return None

    def mapping(self, name: str) -> Mapping[str, object]:
        """A free-form table, frozen; reports a non-table value."""
        table = self.table(name)
        return EMPTY if table is None else frozen_mapping(table.data)

    def string_mapping(self, name: str) -> Mapping[str, str]:
        """A table whose values must all be strings (environment variables)."""
        table = self.table(name)
        if table is None:
            return MappingProxyType({})
        out: dict[str, str] = {}
        for key, value in table.data.items():
            if isinstance(value, str):
                out[key] = value
            else:
                table.report(key, f"expected a string, found {describe(value)}")
        return MappingProxyType(out)

    def tables(self, name: str, *, required: bool = False) -> list[Self]:
        """An array of tables (``[[name]]``)."""
        if name not in self.data:
            self._missing(name, required)
            return []
        value = self.data[name]
        if not isinstance(value, list):
            self.report(
                name, f"expected an array of tables ([[{self.key(name)}]]), found {describe(value)}"
            )
            return []
        out: list[Self] = []
        for index, item in enumerate(value):
            path = f"{self.key(name)}[{index}]"
            if isinstance(item, Mapping):
                out.append(type(self)(self.source, path, item))
            else:
                self.source.report(path, f"expected a table, found {describe(item)}")
        return out


def check_unique_ids(
    tables: Sequence[Table], ids: list[str], what: str, *, any_length: bool = False
) -> None:
    """Report a repeated id (at its second and later uses) and ids that are not tokens
    (``any_length``: no 64-character cap, as the published reader keeps module ids)."""
    seen: set[str] = set()
    for table, ident in zip(tables, ids, strict=True):
        if not ident:
            continue
        if any_length and _LONG_TOKEN.fullmatch(ident) is None:
            table.report(
                "id",
                f"{what} id `{ident}` is not a token (letters, digits, `.`, `_`, `-`; "
                "starting with a letter or digit)",
            )
        elif not any_length and not is_token(ident):
            table.report(
                "id",
                f"{what} id `{ident}` is not a token (letters, digits, `.`, `_`, `-`; "
                "at most 64; starting with a letter or digit)",
            )
        if ident in seen:
            table.report("id", f"duplicate {what} id `{ident}`")
        seen.add(ident)


# --------------------------------------------------------------------------- near misses

#: Similarity (difflib ratio) from which an unknown key counts as a typo of a known one.
TYPO_CUTOFF = 0.75


def _fold(name: str) -> str:
    return name.strip().lower().replace("-", "_")


def suggest(name: str, known: Iterable[str], *, cutoff: float = TYPO_CUTOFF) -> str | None:
    """The known name ``name`` most plausibly misspells, or ``None``.

    An exact match is not a suggestion (it returns ``None``): the caller asks only
    about names it does not know.
    """
    candidates = sorted(set(known))
    if name in candidates:
        return None
    folded = {_fold(k): k for k in candidates}
    hit = folded.get(_fold(name))
    if hit is not None:
        return hit
    close = difflib.get_close_matches(_fold(name), list(folded), n=1, cutoff=cutoff)
    return folded[close[0]] if close else None


def did_you_mean(name: str, known: Iterable[str], *, cutoff: float = TYPO_CUTOFF) -> str:
    """``"; did you mean `x`?"`` when a suggestion exists, else an empty string."""
    hit = suggest(name, known, cutoff=cutoff)
    return f"; did you mean `{hit}`?" if hit else ""
