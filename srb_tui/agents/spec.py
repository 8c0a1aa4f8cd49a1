"""Agent specifications as operators write them: ``untouched``, ``replay:NAME|PATH``,
``command:ARGV``, and (for the real clients) ``claude-code:MODEL``, ``codex:MODEL``,
``mini-swe-agent:MODEL``.
"""

from __future__ import annotations

import difflib
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from srb_tui.agents.kinds import BUILTIN_KINDS, CLIENT_KINDS, is_client


class AgentSpecError(ValueError):
    """An agent specification that cannot be used, with the reason."""


@dataclass(frozen=True)
class AgentSpec:
    """A parsed agent specification.

    ``replay_tree`` is the submission tree a replay agent puts into the workspace;
    ``argv`` the command a command agent runs; ``model`` the model of a real client.
    """

    kind: str
    text: str
    replay_tree: Path | None = None
    argv: tuple[str, ...] = ()
    model: str | None = None

    @property
    def label(self) -> str:
        return self.text


def parse_agent_spec(text: str, task_dir: Path | None = None) -> AgentSpec:
    """Parse ``text``; ``replay:NAME`` is looked up in the task's ``submissions/``."""
    raw = text.strip()
    kind, _, rest = raw.partition(":")
    builtin = _BUILTIN_PARSERS.get(kind)
    if builtin is not None:
        return builtin(raw, rest, task_dir)
    if is_client(kind):
        if not rest:
            raise AgentSpecError(f"agent {raw!r}: name the model, e.g. {kind}:MODEL")
        return AgentSpec(kind, raw, model=rest)
    known = ", ".join([*BUILTIN_KINDS, *CLIENT_KINDS])
    raise AgentSpecError(f"agent {raw!r}: unknown kind {kind!r} (known: {known})")


def _untouched(raw: str, rest: str, task_dir: Path | None) -> AgentSpec:
    if rest:
        raise AgentSpecError(f"agent {raw!r}: `untouched` takes no argument")
    return AgentSpec("untouched", raw)


def _replay(raw: str, rest: str, task_dir: Path | None) -> AgentSpec:
    return AgentSpec("replay", raw, replay_tree=_replay_tree(raw, rest, task_dir))


def _command(raw: str, rest: str, task_dir: Path | None) -> AgentSpec:
    try:
        argv = tuple(shlex.split(rest))
    except ValueError as exc:
        raise AgentSpecError(f"agent {raw!r}: cannot split the command ({exc})") from exc
    if not argv:
        raise AgentSpecError(f"agent {raw!r}: `command:` needs a command, e.g. "
                             "command:'make migrate'")
    return AgentSpec("command", raw, argv=argv)


_BUILTIN_PARSERS: dict[str, Callable[[str, str, Path | None], AgentSpec]] = {
    "untouched": _untouched, "replay": _replay, "command": _command}


def _replay_tree(raw: str, rest: str, task_dir: Path | None) -> Path:
    if not rest:
        raise AgentSpecError(f"agent {raw!r}: name a submission (replay:reference) or a path")
    candidates = []
    if task_dir is not None and "/" not in rest:
        candidates.append(task_dir / "submissions" / rest)
    candidates.append(Path(rest).expanduser())
    for path in candidates:
        if path.is_dir():
            return path.resolve()
    available = ""
    if task_dir is not None and (task_dir / "submissions").is_dir():
        names = sorted(p.name for p in (task_dir / "submissions").iterdir() if p.is_dir())
        near = difflib.get_close_matches(rest, names, n=1, cutoff=0.6) if "/" not in rest else []
        hint = f"did you mean replay:{near[0]}? " if near else ""
        available = f" ({hint}this task has: {', '.join(names)})" if names else ""
    if task_dir is not None and "/" not in rest:  # a name: where the task keeps them
        where = f"{task_dir / 'submissions' / rest} (nor a folder {rest!r} here)"
    else:
        where = str(candidates[-1])
    raise AgentSpecError(f"agent {raw!r}: no submission tree at {where}{available}")
