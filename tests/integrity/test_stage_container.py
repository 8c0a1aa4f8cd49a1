"""The line between grader and submission inside a real stage container (engine + the demo's
behavioural image): capabilities, private paths, signals, /proc, cleanup, storage."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
import pytest_asyncio

from srb_tui.grader.boundary.submission import LIBRARY_DIR
from srb_tui.runner import DockerEngine, RunnerPool, exec_run
from srb_tui.schema import load_task
from srb_tui.service.grading.stages.behavioural import LAYOUT
from srb_tui.service.grading.stages.common import StageImages
from srb_tui.service.grading.stages.stage_container import GRADER_CAP_MASK, StageContainer
from srb_tui.service.grading.stages.stage_layout import LAUNCHER

from ..conftest import DEMO_TASK

pytestmark = [pytest.mark.docker, pytest.mark.asyncio(loop_scope="module")]
BASE_IMAGE = "srb/base:bookworm"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def box(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[StageContainer]:
    load = load_task(DEMO_TASK)
    assert load.task is not None
    task = load.task
    engine = DockerEngine(RunnerPool(2))
    images = StageImages(engine, task, BASE_IMAGE, lambda event: None)
    info = await images.get("behavioural")
    tree = tmp_path_factory.mktemp("tree")
    (tree / "state-a.txt").write_text("the answer\n")
    container = StageContainer(
        engine, "integrity-box", "behavioural", info.tag, publish=lambda e: None,
        layout=LAYOUT, task=task,
    )
    async with container:
        await container.put_trees(tree, tree, workspace=True)
        await container.put_context(task, ["behavioural"])
        await as_grader(container, (
            "from pathlib import Path; from srb_grader.suite.run import stage_submission\n"
            "stage_submission(Path('/srb/submission'), Path('/workspace/repo'))"))
        yield container
    engine.close()


async def as_submission(box: StageContainer, script: str, timeout: float = 60) -> tuple[int, str]:
    """Run a bash script through srb-submission, as a module would; (exit, stdout+stderr)."""
    res = await exec_run(
        box.engine, box.h, [LAUNCHER, "--", "bash", "-c", script],
        timeout_sec=timeout, env={"SRB_SANDBOX": "on"},
    )
    return res.exit_code, (res.stdout + res.stderr).decode("utf-8", "replace")


LIBRARY_CALL = (
    f"import sys; sys.path.insert(0, {LIBRARY_DIR!r}); import srb_submission\n"
    "done = srb_submission.run(['bash', '-c', sys.argv[1]], timeout=float(sys.argv[2]))\n"
    "sys.stdout.buffer.write(done.stdout + done.stderr)\n"
    "sys.exit(done.returncode if done.returncode >= 0 else 128 - done.returncode)\n"
)


async def as_submission_in_process(
    box: StageContainer, script: str, timeout: float = 60
) -> tuple[int, str]:
    """The same script started as a Python module starts it in-process (``import
    srb_submission``: a fork of the module, no second interpreter)."""
    res = await exec_run(
        box.engine, box.h, [box.python, "-I", "-c", LIBRARY_CALL, script, str(timeout - 5)],
        timeout_sec=timeout, env={"SRB_SANDBOX": "on"},
    )
    return res.exit_code, (res.stdout + res.stderr).decode("utf-8", "replace")


Submit = Callable[..., Awaitable[tuple[int, str]]]


@pytest.fixture(params=["launcher", "in-process"])
def submit(request: pytest.FixtureRequest) -> Submit:
    """Both ways a module starts submission code: the srb-submission executable and
    ``srb_submission.run`` in the module's own process."""
    return as_submission if request.param == "launcher" else as_submission_in_process


async def as_grader(box: StageContainer, code: str) -> str:
    argv = [box.python, "-I", "-c",
            "import sys; sys.path.insert(0, '/opt/srb')\n" + code]
    res = await exec_run(box.engine, box.h, argv, timeout_sec=60)
    assert res.exit_code == 0, res.stderr.decode()
    return res.stdout.decode()


async def test_capabilities_seen_from_inside(box: StageContainer, submit: Submit) -> None:
    caps = box.lockdown_report["capabilities"]
    assert int(caps["CapEff"], 16) == GRADER_CAP_MASK  # SETUID, SETGID, KILL, SYS_PTRACE only
    assert int(caps["CapBnd"], 16) == GRADER_CAP_MASK and caps["NoNewPrivs"] == "1"
    code, out = await submit(
        box, "id -u; id -G; grep -E 'Cap(Eff|Prm|Bnd)|NoNewPrivs' /proc/self/status"
    )
    assert code == 0, out
    lines = out.split()
    assert lines[0] == str(box.uid_base) and lines[1] == str(box.uid_base)
    assert box.uid_base >= 100_000
    status = dict(zip(lines[2::2], lines[3::2], strict=False))
    assert int(status["CapEff:"], 16) == 0 and int(status["CapPrm:"], 16) == 0
    assert status["NoNewPrivs:"] == "1"


async def test_grader_paths_are_out_of_reach(box: StageContainer, submit: Submit) -> None:
    script = """
    for p in /opt/srb /opt/srb/srb_grader/cli.py /tests/behavioural/data/expected \
             /srb/original/state-a.txt /srb/grader /usr/libexec/srb/python3.11; do
      if cat "$p" >/dev/null 2>&1 || ls "$p" >/dev/null 2>&1
      then echo "READ $p"; else echo "refused $p"; fi
    done
    /opt/srb/python/bin/python3 -c 1 2>/dev/null && echo "RAN python" || echo "refused python"
    /usr/libexec/srb/python3.11 -c 1 2>/dev/null && echo "RAN libexec" || echo "refused libexec"
    for d in / /var/tmp /run/lock /srb /srb/work /opt; do
      touch "$d/x" 2>/dev/null && echo "WROTE $d" || echo "refused $d"
    done
    touch /tmp/x "$HOME/x" /workspace/repo/x && echo "wrote own"
    env | grep -c '^SRB_' || true
    echo "HOME=$HOME NOUSERSITE=$PYTHONNOUSERSITE"
    """
    code, out = await submit(box, script)
    assert code == 0, out
    assert "READ" not in out and "RAN" not in out and "WROTE" not in out, out
    assert out.count("refused") == 14 and "wrote own" in out
    assert "\n0\n" in out  # no SRB_* name reaches submission code
    assert "HOME=/srb/run/0/home NOUSERSITE=1" in out


async def test_the_grader_cannot_be_signalled_or_read(box: StageContainer, submit: Submit) -> None:
    code, out = await submit(box, """
    for pid in $(ls /proc | grep -E '^[0-9]+$'); do
      owner=$(stat -c %u /proc/$pid 2>/dev/null) || continue
      [ "$owner" = 0 ] || continue
      kill -9 $pid 2>/dev/null && echo "KILLED $pid"
      (exec 3</proc/$pid/mem) 2>/dev/null && echo "MEM $pid"
      cat /proc/$pid/environ >/dev/null 2>&1 && echo "ENV $pid"
      echo "tried $pid"
    done
    """)
    assert code == 0, out
    assert "tried 1" in out and "KILLED" not in out and "MEM" not in out and "ENV" not in out
    alive = await exec_run(box.engine, box.h, ["true"])
    assert alive.exit_code == 0  # the container (its init, its sleep) is untouched


async def test_setsid_escapes_are_ended_whole(box: StageContainer, submit: Submit) -> None:
    code, out = await submit(
        box, "setsid sleep 300 & setsid bash -c 'sleep 301' & sleep 1; echo started"
    )
    assert code == 0 and "started" in out
    before = json.loads(await as_grader(box, (
        "import json; from srb_grader.boundary import sandbox\n"
        "print(json.dumps(len(sandbox.uid_processes(sandbox.slot_ids(0)[0]))))")))
    assert before >= 2
    after = json.loads(await as_grader(box, (
        "import json; from srb_grader.boundary import sandbox\n"
        "gone = sandbox.reset(0)\n"
        "print(json.dumps([gone, len(sandbox.uid_processes(sandbox.slot_ids(0)[0]))]))")))
    assert after == [True, 0]


async def test_what_the_program_leaves_in_its_group_is_ended_by_the_launcher(
    box: StageContainer, submit: Submit
) -> None:
    """Background children of the program's own session outlive it only until the launcher
    returns: SIGTERM, then SIGKILL for one that ignores SIGTERM (no slot reset needed)."""
    count = (  # the slot's sleeps, polled for up to 5 s (a SIGKILLed one takes a moment)
        "import json, time; from srb_grader.boundary import sandbox\n"
        "uid = sandbox.slot_ids(0)[0]\n"
        "def cmd(p):\n"
        "    try:\n"
        "        return open(f'/proc/{p}/cmdline', 'rb').read()\n"
        "    except OSError:\n"
        "        return b''\n"
        "end = time.monotonic() + 5\n"
        "while True:\n"
        "    left = [p for p in sandbox.uid_processes(uid) if b'sleep' in cmd(p)]\n"
        "    if not left or time.monotonic() > end:\n"
        "        break\n"
        "    time.sleep(0.05)\n"
        "print(json.dumps(len(left)))"
    )
    assert json.loads(await as_grader(box, count)) == 0
    code, out = await submit(
        box, "sleep 302 & (trap '' TERM; exec sleep 303) & echo started"
    )
    assert code == 0 and "started" in out
    assert json.loads(await as_grader(box, count)) == 0


async def test_filling_the_disk_is_the_submissions_own_failure(box: StageContainer) -> None:
    code, out = await as_submission(box, """
    for d in "$HOME" /tmp /workspace; do
      dd if=/dev/zero of="$d/fill" bs=1M count=4000 2>&1 | grep -v records
    done
    """, timeout=120)
    stops = out.count("No space left on device") + out.count("File too large")
    assert stops == 3, out  # every writable place is a sized tmpfs
    # The grader's own folder is on another filesystem: its checkpoint still writes.
    wrote = await as_grader(box, (
        "from srb_grader.envelope import atomic_write_json\n"
        "atomic_write_json('/srb/grader/check.json', {'ok': True}); print('ok')"))
    assert wrote.strip() == "ok"
    await as_grader(box, "from srb_grader.boundary import sandbox; sandbox.reset(0)")
    code, out = await as_submission(box, "rm -f /workspace/fill; find /tmp $HOME -type f | wc -l")
    assert code == 0 and out.split()[-1] == "0", out  # reset wiped what the uid wrote


async def test_a_kill_from_outside_is_named_not_a_timeout(box: StageContainer) -> None:
    res = await exec_run(box.engine, box.h, ["sh", "-c", "kill -9 $$"], timeout_sec=900)
    assert res.timed_out is False and res.signal_name == "SIGKILL"


async def test_fork_bomb_stays_inside_its_limit(box: StageContainer) -> None:
    _, out = await as_submission(
        box, "for i in $(seq 2000); do sleep 30 & done 2>&1 | tail -1; echo done", timeout=120
    )
    assert "done" in out
    fingerprint = await box.grader(["fingerprint"], timeout_sec=60)  # the grader still forks
    assert fingerprint.exit_code == 0
    left = json.loads(await as_grader(box, (
        "import json; from srb_grader.boundary import sandbox\n"
        "sandbox.reset(0); print(json.dumps(len(sandbox.uid_processes(sandbox.slot_ids(0)[0]))))")))
    assert left == 0


async def test_python_mode_hands_over_no_interpreter(box: StageContainer) -> None:
    # A python-shebang entry runs with the grader's interpreter as the submission uid, but
    # cannot start that interpreter again by path: the binary stays 0700 root.
    script = (
        "import os, subprocess, sys\n"
        "print(os.getuid())\n"
        "try:\n"
        "    subprocess.run([sys.executable, '-c', '1'])\n"
        "    print('again ran')\n"
        "except PermissionError:\n"
        "    print('again refused')\n"
    )
    made = await exec_run(box.engine, box.h, [
        "sh", "-c",
        f"mkdir -p /srb/work && cat > /srb/work/probe.py <<'EOF'\n{script}EOF\n",
    ])
    assert made.exit_code == 0
    res = await exec_run(
        box.engine, box.h, [LAUNCHER, "--python", "--", "/srb/work/probe.py"],
        timeout_sec=60, env={"SRB_SANDBOX": "on"},
    )
    out = res.stdout.decode() + res.stderr.decode()
    assert str(box.uid_base) in out and "again refused" in out, out


async def test_the_in_process_launcher_end_to_end(box: StageContainer) -> None:
    """``srb_submission.run`` from a module: input, output, statuses, timeouts and the
    Python mode, which must start a fresh interpreter (not a fork of the module's memory)."""
    made = await exec_run(box.engine, box.h, [
        "sh", "-c",
        "mkdir -p /srb/work && printf '%s\\n' 'import os, sys' "
        "'print(os.getuid(), \"srb_secret_marker\" in sys.modules, sys.argv[1:])' "
        "> /srb/work/probe.py",
    ])
    assert made.exit_code == 0
    code = (
        "import json, subprocess, sys, time, types\n"
        f"sys.path.insert(0, {LIBRARY_DIR!r}); import srb_submission as s\n"
        "sys.modules['srb_secret_marker'] = types.ModuleType('srb_secret_marker')\n"
        "r = {}\n"
        "d = s.run(['bash', '-c', 'id -u; pwd; echo \"$EXTRA\"; cat; echo err >&2'],\n"
        "          input=b'fed' * 50000, env={'EXTRA': 'x1', 'HOME': '/nope'})\n"
        "r['plain'] = [d.returncode, d.stdout.decode().split('\\n')[:3],\n"
        "              len(d.stdout), d.stderr.decode()]\n"
        "r['signal'] = s.run(['bash', '-c', 'kill -9 $$']).returncode\n"
        "d = s.run(['/nowhere/tool'])\n"
        "r['missing'] = [d.returncode, d.stderr.decode()]\n"
        "t0 = time.monotonic()\n"
        "try:\n"
        "    s.run(['bash', '-c', 'echo partial; sleep 30 & sleep 31'], timeout=1)\n"
        "    r['timeout'] = 'returned'\n"
        "except subprocess.TimeoutExpired as exc:\n"
        "    r['timeout'] = [exc.output.decode(), round(time.monotonic() - t0)]\n"
        "t0 = time.monotonic()\n"
        "d = s.run(['bash', '-c', 'sleep 40 & echo left'])\n"
        "r['left'] = [d.stdout.decode(), round(time.monotonic() - t0)]\n"
        "d = s.run(['/srb/work/probe.py', 'a b'], python=True)\n"
        "r['python'] = [d.returncode, d.stdout.decode()]\n"
        "print(json.dumps(r))\n"
    )
    out = json.loads(await as_grader_env(box, code, {"SRB_SANDBOX": "on"}))
    uid = str(box.uid_base)
    rc, head, size, err = out["plain"]
    assert rc == 0 and head == [uid, "/srb/run/0/work", "x1"] and err == "err\n"
    assert size == len(f"{uid}\n/srb/run/0/work\nx1\n") + 3 * 50000
    assert out["signal"] == -9
    assert out["missing"][0] == 127 and "cannot start '/nowhere/tool'" in out["missing"][1]
    assert out["timeout"][0] == "partial\n" and out["timeout"][1] < 5
    assert out["left"] == ["left\n", 0]  # the background sleep did not hold the case up
    assert out["python"] == [0, f"{uid} False ['a b']\n"]
    left = json.loads(await as_grader(box, (
        "import json; from srb_grader.boundary import sandbox\n"
        "print(json.dumps(len(sandbox.uid_processes(sandbox.slot_ids(0)[0]))))")))
    assert left == 0  # every sleep above went with its session


async def as_grader_env(box: StageContainer, code: str, env: dict[str, str]) -> str:
    argv = [box.python, "-I", "-c", "import sys; sys.path.insert(0, '/opt/srb')\n" + code]
    res = await exec_run(box.engine, box.h, argv, timeout_sec=120, env=env)
    assert res.exit_code == 0, res.stderr.decode()
    return res.stdout.decode()
