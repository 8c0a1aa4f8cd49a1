"""A hostile demo01 submission that behaves differently where the fuzzer runs it (issue 32,
items 3 and 7).

It is the honest `subtle` port with one change in its entry point: when the real path of
its own script or its working folder lies under a fuzzer's folder (``/fuzz/``: the view the
fuzzer used to run programs from, ``/srb/stage/N/fuzz/view``), it adds one space to the end
of its output. Under a fuzzer that runs the program somewhere adjudication does not, every
input then shows a difference, each shrinks to a tiny input on which the honest candidate
run (at ``/srb/run/N/target``) sees no difference, and the counterexamples that subtle's
real flaw would have given are crowded out: upheld ones fell from 6 to 1–2.

It writes ``srb-attack view: ran at PATH`` on stderr on every run and ``srb-attack view:
under the fuzzer at PATH: USED`` when it takes the other path.
"""

from __future__ import annotations

import shutil
from pathlib import Path

ENTRY = r"""#!/usr/bin/env node
"use strict";
// Command-line entry point: run csvtab and leave with its exit status.
const fs = require("fs");
const log = (what) => { try { fs.writeSync(2, `srb-attack view: ${what}\n`); } catch (e) {} };
let here = __filename;
try { here = fs.realpathSync(__filename); } catch (e) {}
const cwd = process.cwd();
log(`ran at ${here} (cwd ${cwd})`);
if (here.includes("/fuzz/") || cwd.includes("/fuzz/")) {
  log(`under the fuzzer at ${here}: USED`);
  process.on("exit", () => { try { fs.writeSync(1, " "); } catch (e) {} });
}

const { main } = require("../lib/cli");

process.exitCode = main(process.argv.slice(2));
"""


def make_view_aware(subtle: Path, dest: Path) -> Path:
    """A copy of ``subtle`` that adds a byte to its output under a fuzzer's folder."""
    shutil.copytree(subtle, dest)
    entry = dest / "bin" / "csvtab"
    if "require(\"../lib/cli\")" not in entry.read_text(encoding="utf-8"):
        raise ValueError("subtle's entry point is not what this hostile tree expects")
    entry.write_text(ENTRY, encoding="utf-8")
    entry.chmod(0o755)
    return dest
