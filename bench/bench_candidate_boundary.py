"""Benchmark: what Stage III's candidate boundary (issue 21) and fresh world (issue 32) cost.

One verification container of the demo task is set up as Stage III sets it up (grader,
State A, the `subtle` submission, the probe's folder). One candidate, written the way srb's
fuzz adversaries write them (it feeds an input to ``bin/csvtab`` and compares stdout and
exit status), is adjudicated by the grader's ``candidate`` subcommand with one rerun pair
(both roles, twice: ``--reruns 2``), alternately:

* boundary: the candidate as its own uid, the program through the exec broker as the slot
  uid (what Stage III runs);
* one uid: ``--no-boundary``, candidate and program as the slot uid (what it ran before);
* boundary, old world: ``SRB_FRESH_WORLD=off``: a slot's reset leaves /dev/mqueue and
  System V IPC alone, as before issue 32 (SRB_WORK is fresh per run either way: the old
  kept folder cost two renames a run, the fresh one a mkdir and an rmtree).

Each adjudication is timed inside the container (``date +%s%N`` around it), so the
``docker exec`` costs neither side. Reported: medians and the ratios boundary / one uid and
fresh world / old world (goal <= 1.10 each).

    .venv/bin/python bench/bench_candidate_boundary.py [-n 7]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import shlex
import statistics
import uuid
from pathlib import Path

from srb_tui.config import Settings
from srb_tui.grader.fuzzing.observed import Observation
from srb_tui.grader.fuzzing.script import candidate_script
from srb_tui.runner import exec_run
from srb_tui.runner.files import put_files
from srb_tui.service.app import open_service
from srb_tui.service.grading.stages.common import StageImages
from srb_tui.service.grading.stages.stage_container import StageContainer
from srb_tui.service.grading.stages.stage_layout import (
    GRADER_HOME,
    ORIGINAL_DIR,
    SUBMISSION_DIR,
    candidate_layout,
)
from srb_tui.service.grading.stages.verification_setup import probe_setup

REPO = Path(__file__).resolve().parents[1]
TASK = REPO / "tasks" / "demo01-csvtab-python-to-node"
FOLDER = "/srb/cand/bench"


def _quiet(_event: object) -> None:
    return None


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=7, help="adjudications of each side")
    args = parser.parse_args()
    settings = Settings(task_roots=(REPO / "tasks",), state_dir=REPO / "state")
    async with open_service(settings) as core:
        await core.connect()
        entry = core.catalog.find(TASK.name)
        assert entry is not None and entry.task is not None
        task = entry.task
        assert task.evaluation is not None
        original = (await core.prepare_state_a(task)).tree
        run_id = f"bench-{uuid.uuid4().hex[:8]}"
        images = StageImages(core.engine, task, settings.base_image, _quiet, run_id=run_id)
        image = await images.get("verification")
        spec = next(st for st in task.evaluation.stages if st.name == "verification")
        setup = probe_setup(task, spec)
        # An input where `subtle` differs from State A (a control character in a markdown
        # cell): the candidate passes on State A and fails on `subtle` in both pairs, so
        # every run happens and the verdict is upheld.
        data, argv = b"a\x08", ["-f", "markdown"]
        async with StageContainer(core.engine, run_id, "verification", image.tag,
                                  publish=_quiet, layout=candidate_layout(1), task=task,
                                  image_env=image.env) as box:
            await box.put_trees(original, TASK / "submissions" / "subtle")
            await box.put_context(task, [setup.folder])
            probe = await exec_run(core.engine, box.h, ["sh", "-c",
                                   f"printf 'a\\010' | {ORIGINAL_DIR}/bin/csvtab -f markdown"],
                                   timeout_sec=60)
            expected = Observation(exit_code=probe.exit_code or 0, stdout=probe.stdout,
                                   stderr=b"", timed_out=False, duration_sec=0.0)
            script = candidate_script(adversary="bench", seed=0, entry="bin/csvtab", argv=argv,
                                      data=data, original_len=len(data), expected=expected)
            await put_files(core.engine, box.h, FOLDER, {"candidate.sh": script.encode()},
                            uid=0, gid=0, mode=0o700)
            options = dataclasses.replace(setup.candidates, reruns=2)
            base = [*box.grader_argv(["candidate", "--candidate", FOLDER,
                                      "--original", ORIGINAL_DIR,
                                      "--submission", SUBMISSION_DIR,
                                      "--stage-base", "/srb/stage/0/bench", "--slot", "0",
                                      *options.args()])]

            async def side(boundary: bool, fresh: bool = True) -> float:
                argv = base + ([] if boundary else ["--no-boundary"])
                cmd = " ".join(shlex.quote(w) for w in argv)
                if not fresh:
                    cmd = "SRB_FRESH_WORLD=off " + cmd
                script = (f"s=$(date +%s%N); {cmd} > /tmp/bench-verdict 2>/dev/null; "
                          "e=$(date +%s%N); echo $((e - s)); tail -1 /tmp/bench-verdict")
                res = await exec_run(core.engine, box.h, ["bash", "-c", script],
                                     timeout_sec=600, workdir=GRADER_HOME)
                lines = res.stdout.decode().splitlines()
                verdict = json.loads(lines[1])
                runs = verdict.get("runs", [])
                assert len(runs) == 4 and verdict["outcome"] == "upheld", verdict
                assert all(r.get("boundary") is not None for r in runs) == boundary, runs
                return int(lines[0]) / 1e9

            await side(True)
            await side(False)
            await side(True, fresh=False)
            on: list[float] = []
            off: list[float] = []
            old: list[float] = []
            sides = [(True, True), (False, True), (True, False)]
            for i in range(args.n):
                for boundary, fresh in sides[i % 3:] + sides[: i % 3]:
                    took = await side(boundary, fresh)
                    (old if not fresh else on if boundary else off).append(took)
    m_on, m_off, m_old = statistics.median(on), statistics.median(off), statistics.median(old)
    print(f"Stage III candidate run (both roles, one rerun pair), {args.n} rounds each, "
          f"image {image.tag}")
    print(f"  with the boundary : median {m_on:6.3f} s  (min {min(on):.3f}, max {max(on):.3f})")
    print(f"  one uid           : median {m_off:6.3f} s  (min {min(off):.3f}, max {max(off):.3f})")
    print(f"  old world         : median {m_old:6.3f} s  (min {min(old):.3f}, max {max(old):.3f})")
    print(f"  ratio boundary/one uid = {m_on / m_off:.3f}  (goal <= 1.10)")
    print(f"  ratio fresh world/old world = {m_on / m_old:.3f}  (goal <= 1.10)")


if __name__ == "__main__":
    asyncio.run(main())
