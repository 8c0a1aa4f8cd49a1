"""Stage III's model-free adversary for services: a differential HTTP fuzzer.

The second domain of the fuzz driver (the first, :mod:`.fuzz`, feeds bytes to a command). A
task whose probe says ``fuzz_domain = "http"`` declares how its service starts
(``fuzz_server``: argv relative to the tree, ``{port}`` replaced by a free loopback port),
a seed file (``fuzz_seeds``: ``{"requests": [...], "vocabulary": {...}}``) and which response
headers matter (``fuzz_headers``). Both trees' servers are started the same way, as the slot's
uid (:func:`.sandbox.spawn`, the identity of the ``srb-submission`` launcher), one after the
other from the same view path, and then get the same requests, each on a fresh connection,
from the grader (:mod:`http.client`): first the seeds, then a deterministic pass (other spellings
of every number in a seed's query, trailing and doubled slashes), then random mutations.
Two responses agree when status, the named headers and
the body are equal. A difference is shrunk (headers and query pairs dropped, body and values
delta-debugged), checked once more against freshly started servers, and written as an
ordinary ``candidate.sh`` that sends the request to ``$SERVICE_URL`` (the task's
run-candidate.sh starts the tree's server and sets it) and demands State A's response; that
candidate goes through the same :func:`.candidate.adjudicate` as every other. Servers are
ended whole (every process of the slot) when they are restarted and when the round ends.

Caveat: a server that loads code or files of its tree lazily, after start-up, may read the
other tree's files while the fuzzer runs (they share the view path); adjudication, which
starts one tree at a time, is what decides.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import random
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import sandbox
from .candidate import (
    CandidateSpec,
    StagingError,
    adjudicate,
    candidate_env,
    check_original,
    stage_copy,
)
from .envelope import atomic_write_json, utc_iso
from .fuzz import HarnessFault
from .fuzz_http_mutate import (
    Request,
    Vocabulary,
    first_pass,
    load_vocabulary,
    mutate_request,
    request_from_seed,
    shrink_request,
)
from .lockdown import stat_signature
from .procs import reap_group

SHOWN_BYTES = 2000
MAX_CORPUS = 256
DEFAULT_HEADERS = ("content-type", "location", "allow", "content-length")


@dataclass
class HttpConfig:
    adversary: str
    original: Path
    submission: Path
    seeds: Path
    server: list[str]
    headers: list[str]
    seed: int
    budget_sec: float
    request_timeout_sec: float
    start_timeout_sec: float
    spec: CandidateSpec
    work: Path
    url_env: str = "SERVICE_URL"
    max_candidates: int = 3
    stage_base: Path | None = None


@dataclass(frozen=True)
class Response:
    """What one server answered (or how the exchange failed)."""

    status: int | None
    headers: tuple[tuple[str, str], ...]
    body: bytes
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "headers": [list(h) for h in self.headers],
            "body": self.body[:SHOWN_BYTES].decode("utf-8", "backslashreplace"),
            "body_bytes": len(self.body),
            "error": self.error,
        }


@dataclass
class State:
    iterations: int = 0
    executions: int = 0
    differences: int = 0
    restarts: int = 0
    candidates: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def exchange(port: int, request: Request, headers: list[str], timeout: float) -> Response:
    """Send ``request`` on a fresh connection; the status, the named headers and the body."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.putrequest(request.method, request.target(), skip_accept_encoding=True)
        for name, value in request.header_list():
            conn.putheader(name, value)
        if request.body is not None:
            conn.putheader("Content-Length", str(len(request.body)))
        conn.endheaders(request.body)
        reply = conn.getresponse()
        body = reply.read()
        kept = tuple(
            sorted((k.lower(), v) for k, v in reply.getheaders() if k.lower() in headers)
        )
        return Response(reply.status, kept, body)
    except (OSError, http.client.HTTPException, ValueError) as exc:
        return Response(None, (), b"", type(exc).__name__)
    finally:
        conn.close()


class ServerPair:
    """Both trees' servers, started from one view path, as the slot's uid."""

    def __init__(self, config: HttpConfig) -> None:
        self.config = config
        self.slot = config.spec.slot
        base = config.work / "runner"
        shutil.rmtree(base, ignore_errors=True)
        base.mkdir(parents=True)
        shown = config.stage_base or base
        shown.mkdir(parents=True, exist_ok=True)
        if sandbox.enabled():
            sandbox.join_slot_groups([self.slot])
            sandbox.give_to_slot(shown, self.slot)
        self.view = shown / "view"
        shutil.rmtree(self.view, ignore_errors=True)
        self.candidate = shown / "candidate"
        shutil.rmtree(self.candidate, ignore_errors=True)
        self.candidate.mkdir()
        self.home = base / "work"
        self.parked = {"original": base / "parked-original", "submission": base / "parked-sub"}
        try:
            for role, tree in (("original", config.original), ("submission", config.submission)):
                stage_copy(tree, self.parked[role])
            check_original(config.spec, self.parked["original"], "the fuzzer's copy of State A")
        except StagingError as exc:
            raise HarnessFault(str(exc)) from None
        self.signature = stat_signature(self.parked["original"])
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.ports: dict[str, int] = {}
        self.logs: dict[str, Path] = {}
        self.start_errors: dict[str, str] = {}

    def _workdir(self) -> Path:
        if sandbox.enabled():
            sandbox.reset(self.slot, remake=("home", "tmp", "work"))
            return sandbox.scratch_dir(self.slot)
        shutil.rmtree(self.home, ignore_errors=True)
        for sub in ("home", "tmp", "work"):
            (self.home / sub).mkdir(parents=True)
        return self.home

    def start(self) -> None:
        """(Re)start both servers: State A first, then the submission, each mounted at the
        view while it starts. A State A that will not serve is a harness fault."""
        self.stop()
        home = self._workdir()
        # The servers get the candidate environment with a role-neutral token, as the CLI
        # domain's program does: both trees start at the same view path, same environment.
        env = candidate_env(
            self.config.spec, self.view, self.candidate / "candidate.sh", home / "work",
            token="fuzz", name="fuzz", home=home / "home", tmpdir=home / "tmp",
        )  # fmt: skip
        env["PYTHONDONTWRITEBYTECODE"] = "1"  # keeps a tree the server could write unchanged
        for role in ("original", "submission"):
            if role == "original" and stat_signature(self.parked[role]) != self.signature:
                raise HarnessFault("the fuzzer's copy of State A changed between two runs")
            self.parked[role].rename(self.view)
            try:
                self.start_errors.pop(role, None)
                error = self._start_one(role, home, env)
            finally:
                self.view.rename(self.parked[role])
            if error is not None:
                self.start_errors[role] = error
                if role == "original":
                    raise HarnessFault(f"State A's server does not start: {error}")

    def _start_one(self, role: str, home: Path, env: dict[str, str]) -> str | None:
        port = free_port()
        argv = [part.replace("{port}", str(port)) for part in self.config.server]
        argv[0] = str(self.view / argv[0])
        log = self.config.work / f"server-{role}.log"
        self.logs[role] = log
        with log.open("wb") as out:
            try:
                proc = sandbox.spawn(argv, slot=self.slot, cwd=str(home), env=env,
                                     stdout=out, stderr=out)
            except OSError as exc:
                return str(exc)
        self.procs[role], self.ports[role] = proc, port
        deadline = time.monotonic() + self.config.start_timeout_sec
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                return f"exited with status {proc.returncode} before serving: {self._log(role)}"
            with contextlib.suppress(OSError), socket.create_connection(
                ("127.0.0.1", port), timeout=0.5
            ):
                return None
            time.sleep(0.02)
        return f"not listening on port {port} after {self.config.start_timeout_sec:g} s"

    def _log(self, role: str) -> str:
        with contextlib.suppress(OSError):
            return self.logs[role].read_bytes()[-400:].decode("utf-8", "replace").strip()
        return ""

    def stop(self) -> None:
        """End both servers whole (every process of the slot, or each one's group)."""
        if sandbox.enabled():
            sandbox.kill_slot(self.slot)
        for proc in self.procs.values():
            if not sandbox.enabled():
                reap_group(proc.pid, grace_sec=1.0)
            with contextlib.suppress(OSError):
                proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
        self.procs.clear()

    def ask(self, role: str, request: Request) -> Response:
        if role in self.start_errors:
            return Response(None, (), b"", "server did not start")
        return exchange(self.ports[role], request, self.config.headers,
                        self.config.request_timeout_sec)

    def pair(self, request: Request) -> tuple[Response, Response]:
        return self.ask("original", request), self.ask("submission", request)


# --------------------------------------------------------------------------- candidates


def candidate_script(*, adversary: str, seed: int, request: Request, expected: Response,
                     headers: list[str], url_env: str) -> str:
    """candidate.sh: send the request to ``$<url_env>`` and demand State A's response."""
    spec = {
        "method": request.method,
        "target": request.target(),
        "headers": request.header_list(),
        "body": None if request.body is None else base64.b64encode(request.body).decode(),
        "status": expected.status,
        "compare": list(headers),
        "expect_headers": [list(h) for h in expected.headers],
        "expect_body": base64.b64encode(expected.body).decode(),
    }
    literal = json.dumps(spec, ensure_ascii=True, indent=1)
    return "\n".join([
        "#!/bin/bash",
        f"# srb HTTP fuzz adversary {adversary} (seed {seed}): one request, shrunk by delta",
        f"# debugging. State A answers {request.method} {request.target()[:80]}",
        f"# with status {expected.status} and a {len(expected.body)}-byte body; any other",
        "# status, compared header or body is a behavioural difference.",
        "set -u",
        "exec python3 - <<'HTTP_CANDIDATE'",
        "import base64, http.client, json, os, sys, urllib.parse",
        f"spec = json.loads({literal!r})",
        f"url = urllib.parse.urlsplit(os.environ[{url_env!r}])",
        "conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)",
        "conn.putrequest(spec['method'], spec['target'], skip_accept_encoding=True)",
        "for name, value in spec['headers']:",
        "    conn.putheader(name, value)",
        "body = None if spec['body'] is None else base64.b64decode(spec['body'])",
        "if body is not None:",
        "    conn.putheader('Content-Length', str(len(body)))",
        "conn.endheaders(body)",
        "reply = conn.getresponse()",
        "got = reply.read()",
        "kept = sorted([k.lower(), v] for k, v in reply.getheaders()",
        "              if k.lower() in spec['compare'])",
        "problems = []",
        "if reply.status != spec['status']:",
        "    problems.append(f\"status {reply.status}, State A answers {spec['status']}\")",
        "if kept != spec['expect_headers']:",
        "    problems.append(f\"headers {kept}, State A sends {spec['expect_headers']}\")",
        "if got != base64.b64decode(spec['expect_body']):",
        "    problems.append('body differs from State A: ' + got[:500].decode('utf-8', 'replace'))",
        "for problem in problems:",
        "    print(problem, file=sys.stderr)",
        "sys.exit(1 if problems else 0)",
        "HTTP_CANDIDATE",
    ]) + "\n"


def load_seed_file(path: Path) -> tuple[list[Request], Vocabulary]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise HarnessFault(f"cannot read the HTTP seed file {path}: {exc}") from None
    raw = data.get("requests") if isinstance(data, dict) else None
    if not isinstance(raw, list) or not raw or not all(isinstance(r, dict) for r in raw):
        raise HarnessFault(f"{path}: expected {{\"requests\": [{{...}}, ...]}} with one or more")
    vocab = data.get("vocabulary") if isinstance(data.get("vocabulary"), dict) else None
    return [request_from_seed(r) for r in raw], load_vocabulary(vocab)


def _judge(config: HttpConfig, state: State, servers: ServerPair, request: Request,
           shrink_deadline: float) -> dict[str, Any] | None:
    """Shrink a difference, confirm it on fresh servers, write and adjudicate its candidate."""

    def differs(trial: Request) -> bool:
        state.executions += 2
        a, b = servers.pair(trial)
        return a.error is None and a != b

    shrunk, tests = shrink_request(request, differs, shrink_deadline)
    confirmed = None
    for trial in dict.fromkeys([shrunk, request]):
        servers.start()
        state.restarts += 1
        a, b = servers.pair(trial)
        state.executions += 2
        if a.error is None and a != b:
            confirmed = (trial, a, b)
            break
    if confirmed is None:
        state.notes.append("a difference did not reproduce on fresh servers; dropped")
        return None
    trial, a, b = confirmed
    index = len(state.candidates)
    script = candidate_script(adversary=config.adversary, seed=config.seed, request=trial,
                              expected=a, headers=config.headers, url_env=config.url_env)
    servers.stop()
    folder = config.work / "candidates" / f"{index:02d}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "candidate.sh").write_text(script, encoding="utf-8")
    verdict = adjudicate(folder, config.original, config.submission, config.spec,
                         stage_base=(config.stage_base or config.work) / "adjudication").to_dict()
    servers.start()
    state.restarts += 1
    record = {
        "index": index,
        "request": trial.to_dict(),
        "shrink_tests": tests,
        "files": {"candidate.sh": script},
        "observed": {"original": a.to_dict(), "submission": b.to_dict()},
        "verdict": verdict,
    }
    state.candidates.append(record)
    return record


def run_round(config: HttpConfig) -> dict[str, Any]:
    """The whole round; returns the result document (outcome broken|survived|error)."""
    started_wall, started = time.time(), time.monotonic()
    deadline = started + config.budget_sec
    state = State()
    outcome, reason = "survived", ""
    rng = random.Random(config.seed)
    servers: ServerPair | None = None
    corpus_size = 0
    try:
        seeds, vocab = load_seed_file(config.seeds)
        corpus: list[Request] = list(seeds)
        bodies = [r.body for r in seeds if r.body] or [b"{}"]
        seen: set[tuple[Any, ...]] = set()
        servers = ServerPair(config)
        servers.start()
        deadline = time.monotonic() + config.budget_sec  # the budget is for requests
        queue = [*seeds, *first_pass(seeds, rng)]
        while time.monotonic() < deadline and len(state.candidates) < config.max_candidates:
            state.iterations += 1
            if queue:
                request = queue.pop(0)
            else:
                request = mutate_request(rng.choice(corpus), rng, vocab, bodies)
            a, b = servers.pair(request)
            state.executions += 2
            if a.error is not None and a.error != "TimeoutError":
                state.notes.append(f"State A failed a request ({a.error}); servers restarted")
                servers.start()
                state.restarts += 1
                continue
            if a == b:
                key = (request.method, a.status, a.headers, len(a.body) // 32)
                if key not in seen and len(corpus) < MAX_CORPUS:
                    seen.add(key)
                    corpus.append(request)
                continue
            state.differences += 1
            allowance = max(5.0, 0.25 * config.budget_sec)
            record = _judge(config, state, servers, request,
                            min(time.monotonic() + allowance, deadline + allowance))
            if record is None:
                continue
            verdict = record["verdict"]
            if verdict["outcome"] == "upheld":
                outcome, reason = "broken", verdict["reason"]
                break
            if verdict["outcome"] == "error":
                outcome, reason = "error", "adjudication failed: " + verdict["reason"]
                break
        else:
            if state.iterations == 0:
                raise HarnessFault("no request was sent within the budget")
            reason = f"no upheld candidate in {state.iterations} requests" + (
                f" ({state.differences} differences, none upheld)" if state.differences else ""
            )
        corpus_size = len(corpus)
    except HarnessFault as exc:
        outcome, reason = "error", str(exc)
    except OSError as exc:
        outcome, reason = "error", f"fuzzer I/O failure: {exc}"
    finally:
        if servers is not None:
            servers.stop()
    if outcome == "survived" and not reason:
        reason = f"stopped after {len(state.candidates)} candidates, none upheld"
    return {
        "adversary": config.adversary,
        "driver": "fuzz",
        "domain": "http",
        "seed": config.seed,
        "outcome": outcome,
        "reason": reason,
        "started_at": utc_iso(started_wall),
        "duration_sec": round(time.monotonic() - started, 3),
        "budget_sec": config.budget_sec,
        "iterations": state.iterations,
        "executions": state.executions,
        "differences": state.differences,
        "restarts": state.restarts,
        "corpus_size": corpus_size,
        "candidates": state.candidates,
        "notes": state.notes,
    }


def main_fuzz_http(config: HttpConfig, result: Path | None) -> dict[str, Any]:
    """Run the round, clean the scratch folder, write and return the result."""
    doc = run_round(config)
    if sandbox.enabled():
        with contextlib.suppress(sandbox.SandboxError):
            sandbox.reset(config.spec.slot)
    with contextlib.suppress(OSError):
        shutil.rmtree(config.work / "runner", ignore_errors=True)
        if config.stage_base is not None:
            shutil.rmtree(config.stage_base, ignore_errors=True)
    if result is not None:
        atomic_write_json(result, doc)
    return doc


__all__ = ["DEFAULT_HEADERS", "HttpConfig", "Response", "candidate_script", "exchange",
           "main_fuzz_http", "run_round"]
