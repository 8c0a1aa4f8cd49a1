"""A probe program (issue 32, item 3): the honest demo01 `reference` port whose bin/csvtab
first lists everything it can observe of the world it runs in, as one JSON document, and
exits 0 without running the port. The document goes to a file in ``/srb/probe-drop`` when the
test's harness made that folder (in a Stage III container: no descriptor of the program
changes for it, and the fresh world's wipe does not look there), else as one ``srb-probe ``
line on stderr.

Fields: the real path of its own script, its cwd, the script as it was named (the argv
element the interpreter got: argv[0] for a compiled program), the sorted environment names,
uid/gid/groups, the rlimits (``/proc/self/limits``), the mount table (``mountinfo`` without
the mount and device numbers), its open descriptors (targets, pipe/socket inode numbers
dropped), and every other process it can see in ``/proc`` (uid and command line)."""

from __future__ import annotations

import shutil
from pathlib import Path

PROBE = r"""
"use strict";
const fs = require("fs");
const read = (p) => { try { return fs.readFileSync(p, "utf8"); } catch (e) { return null; } };
const link = (p) => { try { return fs.readlinkSync(p); } catch (e) { return "?"; } };
const own = `/proc/${process.pid}/`;
const fds = fs.readdirSync("/proc/self/fd").map((fd) => {
  const target = link(`/proc/self/fd/${fd}`).replace(/^(pipe|socket):\[\d+\]$/, "$1")
    .replace(own, "/proc/self/");
  return `${fd} ${target}`;
}).sort();
const limits = (read("/proc/self/limits") || "").split("\n").slice(1).filter(Boolean)
  .map((l) => l.replace(/\s{2,}/g, " | ").trim());
const mounts = (read("/proc/self/mountinfo") || "").split("\n").filter(Boolean).map((l) => {
  const f = l.split(" ");
  return [f[3], f[4], f[5], ...f.slice(f.indexOf("-") + 1)].join(" ");
}).sort();
const procs = fs.readdirSync("/proc").filter((n) => /^\d+$/.test(n) && Number(n) !== process.pid)
  .map((n) => {
    const status = read(`/proc/${n}/status`);
    const uid = status ? (/\nUid:\s+(\d+)/.exec(status) || [])[1] : "?";
    const cmd = (read(`/proc/${n}/cmdline`) || "").split("\0").filter(Boolean).join(" ");
    return status === null ? null : `${uid} ${cmd}`;
  }).filter((p) => p !== null).sort();
const doc = JSON.stringify({
  script: fs.realpathSync(process.argv[1]),
  cwd: process.cwd(),
  argv0: process.argv[1],
  env: Object.keys(process.env).sort(),
  uid: process.getuid(),
  gid: process.getgid(),
  groups: process.getgroups().sort((a, b) => a - b),
  limits,
  mounts,
  fds,
  procs,
});
const drop = "/srb/probe-drop";
if (fs.existsSync(drop)) {
  const name = `${drop}/${String(process.hrtime.bigint()).padStart(24, "0")}.json`;
  fs.writeFileSync(name, doc);
} else {
  fs.writeSync(2, `srb-probe ${doc}\n`);
}
process.exit(0);
"""


def make_probe(source: Path, dest: Path) -> Path:
    """A copy of ``source`` whose bin/csvtab runs the probe instead of the port."""
    shutil.copytree(source, dest)
    (dest / "lib" / "probe.js").write_text(PROBE, encoding="utf-8")
    entry = dest / "bin" / "csvtab"
    text = entry.read_text(encoding="utf-8")
    head, _, rest = text.partition("\n")
    entry.write_text(f'{head}\nrequire("../lib/probe");\nif (false) {{\n{rest}\n}}\n',
                     encoding="utf-8")
    return dest
