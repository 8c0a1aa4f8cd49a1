"""Links in a task directory that lead out of it.

srb reads a task's files (instruction.md, the manifests, State A's archive, the digest)
and copies its folders into containers. A symbolic link whose target resolves outside the
task directory would hand a host file (``instruction.md -> /etc/passwd``) to the agent and
to the model vendor, so such a task does not load: every link that leaves is named, with
its target, and nothing else of the task is read. Links that stay inside are fine.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class LeavingLink:
    """A link (relative to the task directory) and the target it names."""

    link: str
    target: str

    @property
    def message(self) -> str:
        return (
            f"link leaves the task directory (-> {self.target}): srb reads and copies "
            "nothing outside a task; copy the file in or point the link inside"
        )


def _inside(base: str, real: str) -> bool:
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def leaving_links(task_dir: Path) -> list[LeavingLink]:
    """Every symbolic link under ``task_dir`` whose target resolves outside it, sorted.

    Links are not followed while walking (a linked folder is one entry); a dangling link
    is judged by where it would point. Unreadable folders are skipped (the readers
    report them)."""
    base = os.path.realpath(task_dir)
    found: list[LeavingLink] = []
    for folder, dirs, files in os.walk(task_dir, followlinks=False):
        for name in (*dirs, *files):
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                continue
            if not _inside(base, os.path.realpath(path)):
                try:
                    target = os.readlink(path)
                except OSError:
                    target = "?"
                rel = Path(os.path.relpath(path, task_dir)).as_posix()
                found.append(LeavingLink(rel, target))
    return sorted(found, key=lambda leaving: leaving.link)
