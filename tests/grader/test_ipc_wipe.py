# ruff: noqa: E501 -- /proc/sysvipc lines as the kernel writes them
"""Reading /proc/sysvipc: which System V objects a uid owns or created (issue 32)."""

from __future__ import annotations

from pathlib import Path

from srb_tui.grader.boundary.ipc_wipe import owned_ipc, wipe_ipc

SHM = """       key      shmid perms                  size  cpid  lpid nattch   uid   gid  cuid  cgid      atime      dtime      ctime                   rss                  swap
1592590336         7   666                  4096   120   120      0 61000 61000 61000 61000          0          0 1733330000                     0                     0
         0         8   600                  4096   121   121      0     0     0     0     0          0          0 1733330000                     0                     0
"""
SEM = """       key      semid perms      nsems   uid   gid  cuid  cgid      otime      ctime
1592590337         3   666          1     0     0 61000 61000          0 1733330000
"""
MSG = """       key      msqid perms      cbytes       qnum lspid lrpid   uid   gid  cuid  cgid      stime      rtime      ctime
"""


def test_objects_are_found_by_owner_or_creator(tmp_path: Path) -> None:
    for name, text in (("shm", SHM), ("sem", SEM), ("msg", MSG)):
        (tmp_path / name).write_text(text)
    assert owned_ipc(61000, str(tmp_path)) == [("shm", 7), ("sem", 3)]
    assert owned_ipc(0, str(tmp_path)) == [("shm", 8), ("sem", 3)]
    assert owned_ipc(61001, str(tmp_path)) == []


def test_nothing_to_remove_loads_nothing(tmp_path: Path) -> None:
    assert wipe_ipc(61000, str(tmp_path / "absent")) == []
