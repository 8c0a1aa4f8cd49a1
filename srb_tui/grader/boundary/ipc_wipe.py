"""System V IPC objects of one uid, removed at a slot's reset.

Shared memory segments, semaphore sets and message queues outlive the process that made
them and are visible to every process of the container's IPC namespace: a program could
leave a note in one and read it back on its next run. The grader may not make an IPC
namespace per run (no CAP_SYS_ADMIN; Docker's seccomp refuses ``unshare(CLONE_NEWUSER)``),
so :func:`.sandbox.wipe_slot` calls :func:`wipe_ipc` as the slot uid after every run: it
reads ``/proc/sysvipc/{shm,sem,msg}`` (this namespace's objects) and removes (IPC_RMID)
every object the uid owns or created. ctypes is loaded only when there is one to remove.
"""

from __future__ import annotations

IPC_RMID = 0
KINDS = (("shm", "shmctl"), ("sem", "semctl"), ("msg", "msgctl"))
PROC = "/proc/sysvipc"


def owned_ipc(uid: int, proc: str = PROC) -> list[tuple[str, int]]:
    """(kind, id) of every System V IPC object whose owner or creator is ``uid``."""
    found: list[tuple[str, int]] = []
    for kind, _ in KINDS:
        try:
            with open(f"{proc}/{kind}", encoding="ascii", errors="replace") as handle:
                lines = handle.read().splitlines()
        except OSError:
            continue
        if not lines:
            continue
        header = lines[0].split()
        try:
            at_id = next(i for i, name in enumerate(header) if name.endswith("id")
                         and name != "key" and name not in ("cpid", "lpid", "lspid", "lrpid"))
            at_uid, at_cuid = header.index("uid"), header.index("cuid")
        except (StopIteration, ValueError):
            continue
        for line in lines[1:]:
            fields = line.split()
            if len(fields) <= max(at_id, at_uid, at_cuid):
                continue
            if str(uid) in (fields[at_uid], fields[at_cuid]):
                found.append((kind, int(fields[at_id])))
    return found


def wipe_ipc(uid: int, proc: str = PROC) -> list[str]:
    """Remove the uid's System V IPC objects (run as that uid); what is still there."""
    found = owned_ipc(uid, proc)
    if not found:
        return []
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    calls = dict(KINDS)
    for kind, ident in found:
        call = getattr(libc, calls[kind])
        if kind == "sem":
            call(ident, 0, IPC_RMID)
        else:
            call(ident, IPC_RMID, None)
    return [f"System V {kind} id {ident}" for kind, ident in owned_ipc(uid, proc)]
