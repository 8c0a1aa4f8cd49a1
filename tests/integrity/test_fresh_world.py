"""A slot's reset in a real Stage III container (issue 32, items 1 and 2).

* A reset that meets an entry the slot cannot remove is a harness fault naming the path,
  and the slot's scratch keeps its owner and mode (0770, the slot's group): the candidate
  identity of that slot still enters it. (The old error handler chmodded the scratch to
  0700 and every later candidate of the slot failed to start.)
* Nothing a program writes survives the reset: as the slot uid (with the candidate /tmp
  group, as a candidate's programs have it) the test scans the whole container for every
  folder it may write (``os.access`` on a walk of ``/``, not a hand list), leaves a note in
  each, plus a POSIX message queue and a System V shared memory segment, semaphore set and
  message queue, and a process left behind listening on an abstract Unix socket; after the
  grader's reset (and the run lease's /tmp wipe) neither the same slot nor another one
  finds any of them. A keyring note is refused outright (Docker's seccomp: add_key EPERM).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from srb_tui.runner import DockerEngine, RunnerPool, exec_run
from srb_tui.schema import load_task
from srb_tui.service.grading.stages.common import StageImages
from srb_tui.service.grading.stages.stage_container import StageContainer
from srb_tui.service.grading.stages.stage_layout import candidate_layout

from ..conftest import DEMO03_TASK

pytestmark = [pytest.mark.docker, pytest.mark.asyncio(loop_scope="module")]
BASE_IMAGE = "srb/base:bookworm"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def box(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[StageContainer]:
    load = load_task(DEMO03_TASK)
    assert load.task is not None
    task = load.task
    engine = DockerEngine(RunnerPool(2))
    info = await StageImages(engine, task, BASE_IMAGE, lambda event: None).get("verification")
    tree = tmp_path_factory.mktemp("tree")
    (tree / "state-a.txt").write_text("the answer\n")
    container = StageContainer(
        engine, "fresh-world", "verification", info.tag, publish=lambda e: None,
        layout=candidate_layout(2), task=task,
    )  # fmt: skip
    async with container:
        await container.put_trees(tree, tree)
        yield container
    engine.close()


async def as_grader(box: StageContainer, code: str) -> object:
    argv = [box.python, "-I", "-c", "import sys; sys.path.insert(0, '/opt/srb')\n" + code]
    res = await exec_run(box.engine, box.h, argv, timeout_sec=120, env={"SRB_SANDBOX": "on"})
    assert res.exit_code == 0, res.stderr.decode()
    return json.loads(res.stdout.decode().strip().splitlines()[-1])


GRADER_ENTRY = r"""
import json, os
from srb_grader.boundary import sandbox
sandbox.join_slot_groups([0])
os.mkdir('/srb/run/0/grader-own', 0o700)  # the grader's: the slot cannot remove it
try:
    sandbox.reset(0, remake=('home', 'tmp', 'work'))
    said = 'no fault'
except sandbox.SandboxError as exc:
    said = str(exc)
mode = oct(os.stat('/srb/run/0').st_mode & 0o7777)
enters = sandbox.run_as_ids(sandbox.candidate_ids(0), lambda: os.listdir('/srb/run/0'), (0,))
try:
    os.rmdir('/srb/run/0/grader-own')
    sandbox.reset(0)
except OSError:
    pass  # (only without the defence: the scratch is 0700 and the test fails below)
print(json.dumps({'said': said, 'mode': mode, 'candidate_enters': enters}))
"""


async def test_a_reset_that_cannot_remove_names_the_path_and_keeps_the_scratch(
    box: StageContainer,
) -> None:
    got = await as_grader(box, GRADER_ENTRY)
    assert isinstance(got, dict)
    assert got["said"] == "the reset of slot 0 cannot remove /srb/run/0/grader-own", got
    assert got["mode"] == "0o770", "no error path changes the mode of a slot's folder"
    assert got["candidate_enters"] == 0, "the slot's candidate still enters its scratch"


# Runs as a slot uid: every folder it may write (a walk of the whole container), a note in
# each, and one object of each IPC kind; or (CHECK) every note and object still there.
PLANT = r"""
import ctypes, json, os, sys
mode, mark = sys.argv[1], sys.argv[2]
skip = ('/proc', '/sys')
found, planted, refused = [], [], []
for current, dirs, files in os.walk('/', topdown=True):
    dirs[:] = [d for d in dirs if os.path.join(current, d) not in skip
               and not os.path.islink(os.path.join(current, d))]
    if mode == 'plant' and os.access(current, os.W_OK | os.X_OK):
        path = os.path.join(current, 'srb-note-' + mark)
        try:
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o644))
            planted.append(current)
        except OSError as exc:
            refused.append(f'{current}: {exc.strerror}')
    found += [os.path.join(current, f) for f in files if f.startswith('srb-note-')]
libc = ctypes.CDLL(None, use_errno=True)
if mode == 'plant':
    key = 0x5eed0000 + int(mark)
    made = {
        'shm': libc.shmget(key, 4096, 0o1000 | 0o666),
        'sem': libc.semget(key + 1, 1, 0o1000 | 0o666),
        'msg': libc.msgget(key + 2, 0o1000 | 0o666),
    }
    planted += [f'sysv {k} {v}' for k, v in made.items() if v >= 0]
    refused += [f'sysv {k}' for k, v in made.items() if v < 0]
keyring = None
if mode == 'plant':
    # a keyring note (add_key, x86-64 syscall 248, to the user keyring -4)
    libc.syscall.restype = ctypes.c_long
    made = libc.syscall(248, b'user', ('srb-note-' + mark).encode(), b'x', 1, -4)
    keyring = 'made' if made >= 0 else os.strerror(ctypes.get_errno())
    # a process left behind, listening on an abstract Unix socket
    import socket, time
    if os.fork() == 0:
        os.setsid()
        os.dup2(os.open('/dev/null', os.O_WRONLY), 1)
        sock = socket.socket(socket.AF_UNIX)
        sock.bind('\0srb-note-' + mark)
        sock.listen()
        time.sleep(3600)
        os._exit(0)
    for _ in range(500):
        if '@srb-note-' + mark in open('/proc/net/unix').read():
            break
        time.sleep(0.01)
abstract = [line.split()[-1] for line in open('/proc/net/unix').read().splitlines()
            if line.endswith('@srb-note-' + mark)]
ipc = []
for kind in ('shm', 'sem', 'msg'):
    for line in open(f'/proc/sysvipc/{kind}').read().splitlines()[1:]:
        if line.split()[0] in {str(0x5eed0000 + int(mark) + i) for i in range(3)}:
            ipc.append(f'{kind} {line.split()[0]}')
print(json.dumps({'planted': planted, 'refused': refused, 'found': sorted(found), 'ipc': ipc,
                  'abstract': abstract, 'keyring': keyring}))
"""

SCAN = r"""
import json, subprocess, sys
from srb_grader.boundary import sandbox
from srb_grader.candidates.scratch import clear_candidate_tmp
uid = sandbox.slot_ids(0)[0]
def as_slot(slot, mode, mark):
    r, w = __import__('os').pipe()
    def body():  # the forked child, already the slot uid
        import os
        os.dup2(w, 1)
        os.close(w)
        os.close(r)
        sys.argv = ['plant', mode, mark]
        exec(PLANT, {})
        sys.stdout.flush()
    sandbox.run_as_slot(slot, body, (sandbox.tmp_gid(),))
    __import__('os').close(w)
    return json.loads(__import__('os').fdopen(r).read())
before = as_slot(0, 'plant', '1')
seen = as_slot(0, 'check', '1')
sandbox.reset(0)
clear_candidate_tmp()
after_same = as_slot(0, 'check', '1')
after_other = as_slot(1, 'check', '1')
print(json.dumps({'before': before, 'seen': seen, 'same': after_same, 'other': after_other}))
"""


async def test_nothing_a_program_writes_survives_the_reset(box: StageContainer) -> None:
    code = f"PLANT = {PLANT!r}\n" + SCAN
    got = await as_grader(box, code)
    assert isinstance(got, dict)
    before = got["before"]
    planted = before["planted"]
    # the scan found the folders every slot program may write, the shared ones included
    assert {"/tmp", "/dev/shm", "/dev/mqueue", "/srb/run/0"} <= set(planted), before
    assert len([p for p in planted if p.startswith("sysv ")]) == 3, before
    # the check sees every note and object before the reset
    notes = [p for p in planted if not p.startswith("sysv ")]
    assert len(got["seen"]["found"]) == len(notes), (got["seen"]["found"], notes)
    assert len(got["seen"]["ipc"]) == 3, got["seen"]
    assert got["seen"]["abstract"] == ["@srb-note-1"], got["seen"]
    # keyrings: Docker's seccomp profile refuses add_key (no note can be left there)
    assert before["keyring"] == "Operation not permitted", before["keyring"]
    for who in ("same", "other"):
        assert got[who]["found"] == [], (who, got[who]["found"], planted)
        assert got[who]["ipc"] == [], (who, got[who]["ipc"])
        assert got[who]["abstract"] == [], "the listener went with the slot's processes"
