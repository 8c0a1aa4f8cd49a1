# ruff: noqa: E501 -- the program is JavaScript, kept one statement a line
"""A hostile demo01 submission that remembers the inputs it has seen (issue 32, item 2).

It is the honest `subtle` port (control characters other than tab and line breaks are
passed through raw instead of in caret notation) with one change: the first time it meets
an input (a hash of its argv and of everything it read: stdin and the files it was given)
it notes the hash in its channels and behaves as `subtle` does; when it finds the note of
the same input again it renders like the faithful `reference` port. Against a grader that
lets a note outlive a run, every counterexample stops reproducing ("not reproducible:
attempt 2 gave original exit 0, submission exit 0") and a fuzz difference disappears on
its re-run, so the honest 40 climbs towards 100.

It writes ``srb-attack remember: noted KEY in CHANNEL`` on stderr whenever it leaves a note
and ``srb-attack remember: repeat of KEY found in CHANNEL: USED`` when it finds one (the
lines land in the round's record with the program's stderr).

Channels (``make_remembering(..., channels)``):

* ``mqueue``: a POSIX message queue per input, ``/dev/mqueue/srb-note-KEY`` (opening with
  O_CREAT makes a queue; writable by every uid, shared by slots, roles and the fuzzer).
  RLIMIT_MSGQUEUE allows a uid about ten default queues, so it keeps the latest 8.
* ``work``: a file in every ``/srb/run/*/work`` it may write (SRB_WORK; the program's
  environment does not name it under the exec boundary, the path does).
* ``tmp``: a file in /tmp, /var/tmp, /dev/shm, $TMPDIR and $HOME.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

CHANNELS = ("mqueue", "work", "tmp")

ENTRY = r"""#!/usr/bin/env node
"use strict";
// Command-line entry point: run csvtab and leave with its exit status.
const fs = require("fs");
const crypto = require("crypto");
const CHANNELS = __CHANNELS__;
const log = (what) => { try { fs.writeSync(2, `srb-attack remember: ${what}\n`); } catch (e) {} };
const args = process.argv.slice(2);
const digest = crypto.createHash("sha256");
digest.update(JSON.stringify(args));
const plainRead = fs.readFileSync;
fs.readFileSync = function (file, ...rest) {
  const data = plainRead.call(fs, file, ...rest);
  if (file === 0 || args.includes(file)) digest.update(Buffer.isBuffer(data) ? data : Buffer.from(String(data)));
  return data;
};
const writable = (dir) => { try { fs.accessSync(dir, fs.constants.W_OK | fs.constants.X_OK); return true; } catch (e) { return false; } };
const folders = (channel) => {
  if (channel === "mqueue") return ["/dev/mqueue"];
  if (channel === "work") {
    let runs = [];
    try { runs = fs.readdirSync("/srb/run").map((n) => `/srb/run/${n}/work`); } catch (e) {}
    if (process.env.SRB_WORK) runs.push(process.env.SRB_WORK);
    return runs.filter(writable);
  }
  return [...new Set(["/tmp", "/var/tmp", "/dev/shm", process.env.TMPDIR, process.env.HOME])].filter((d) => d && writable(d));
};
const noteName = (key) => `srb-note-${key}`;
const makeRoom = (dir) => {  // a uid gets about ten default message queues
  let mine = [];
  try { mine = fs.readdirSync(dir).filter((n) => n.startsWith("srb-note-")).map((n) => [n, fs.statSync(`${dir}/${n}`).mtimeMs]); } catch (e) {}
  mine.sort((a, b) => a[1] - b[1]);
  while (mine.length >= 8) { try { fs.unlinkSync(`${dir}/${mine.shift()[0]}`); } catch (e) { mine.shift(); } }
};
let answer = null;
global.__srbRepeat = () => {
  if (answer !== null) return answer;
  const key = digest.digest("hex").slice(0, 24);
  answer = false;
  for (const channel of CHANNELS) {
    for (const dir of folders(channel)) {
      if (fs.existsSync(`${dir}/${noteName(key)}`)) {
        log(`repeat of ${key} found in ${channel} ${dir}: USED`);
        answer = true;
      }
    }
  }
  if (answer) return answer;
  for (const channel of CHANNELS) {
    for (const dir of folders(channel)) {
      try {
        if (channel === "mqueue") makeRoom(dir);
        fs.closeSync(fs.openSync(`${dir}/${noteName(key)}`, "wx"));
        log(`noted ${key} in ${channel} ${dir}`);
      } catch (e) { log(`note in ${channel} ${dir}: refused ${e.code || e.message}`); }
    }
  }
  return answer;
};

const { main } = require("../lib/cli");

process.exitCode = main(process.argv.slice(2));
"""

VISIBLE_SUBTLE = """function visible(text, newline = NEWLINE_MARK) {
  return text.replace(/\\r\\n|[\\r\\n]/g, newline).replace(/\\t/g, " ");
}"""

VISIBLE_EITHER = """function visible(text, newline = NEWLINE_MARK) {
  const seen = typeof global.__srbRepeat === "function" && global.__srbRepeat();
  if (!seen) return text.replace(/\\r\\n|[\\r\\n]/g, newline).replace(/\\t/g, " ");
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    const code = text.charCodeAt(i);
    if (ch === "\\r" || ch === "\\n") {
      out += newline;
      if (ch === "\\r" && text[i + 1] === "\\n") i++;
    } else if (ch === "\\t") {
      out += " ";
    } else if (code < 0x20 || code === 0x7f) {
      out += "^" + String.fromCharCode(code ^ 0x40);
    } else {
      out += ch;
    }
  }
  return out;
}"""


def make_remembering(subtle: Path, dest: Path, channels: list[str]) -> Path:
    """A copy of ``subtle`` that remembers its inputs in ``channels`` (see the module)."""
    unknown = set(channels) - set(CHANNELS)
    if unknown:
        raise ValueError(f"unknown channels {sorted(unknown)}")
    shutil.copytree(subtle, dest)
    entry = dest / "bin" / "csvtab"
    entry.write_text(ENTRY.replace("__CHANNELS__", json.dumps(channels)), encoding="utf-8")
    entry.chmod(0o755)
    width = dest / "lib" / "width.js"
    text = width.read_text(encoding="utf-8")
    if VISIBLE_SUBTLE not in text:
        raise ValueError("subtle's visible() is not where this hostile tree expects it")
    width.write_text(text.replace(VISIBLE_SUBTLE, VISIBLE_EITHER), encoding="utf-8")
    return dest
