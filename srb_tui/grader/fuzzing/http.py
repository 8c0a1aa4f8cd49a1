"""Stage III's model-free adversary for services: a differential HTTP fuzzer.

The second domain of the fuzz driver (the first, :mod:`.argv`, feeds bytes to a command). A
task whose probe says ``fuzz_domain = "http"`` declares how its service starts
(``fuzz_server``: argv relative to the tree, ``{port}`` replaced by a free loopback port),
a seed file (``fuzz_seeds``: ``{"requests": [...], "vocabulary": {...}}``) and which response
headers matter (``fuzz_headers``). Both trees' servers are started the same way, as the slot's
uid (:func:`..boundary.sandbox.spawn`, the identity of the ``srb-submission`` launcher), one after
the other from the same view path, and then get the same requests, each on a fresh connection,
from the grader (:mod:`http.client`): first the seeds, then a deterministic pass (other spellings
of every number in a seed's query, trailing and doubled slashes), then random mutations.
Two responses agree when status, the named headers and
the body are equal. A difference is shrunk (headers and query pairs dropped, body and values
delta-debugged), checked once more against freshly started servers, and written as an
ordinary ``candidate.sh`` that sends the request to ``$SERVICE_URL`` (the task's
run-candidate.sh starts the tree's server and sets it) and demands State A's response; that
candidate goes through the same :func:`..candidates.judge.adjudicate` as every other. Servers are
ended whole (every process of the slot) when they are restarted and when the round ends.

Caveat: a server that loads code or files of its tree lazily, after start-up, may read the
other tree's files while the fuzzer runs (they share the view path); adjudication, which
starts one tree at a time, is what decides.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import random
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..boundary import sandbox
from ..boundary.procs import reap_group
from ..candidates.records import CandidateSpec
from . import view as fuzz_view
from .build import BuildSpec
from .http_mutate import (
    Request,
    Vocabulary,
    first_pass,
    load_vocabulary,
    mutate_request,
    request_from_seed,
    shrink_request,
)
from .observed import Response
from .script import http_candidate_script
from .view import HarnessFault, RoundState, TreeView

DEFAULT_HEADERS = ("content-type", "location", "allow", "content-length")


@dataclass
class HttpConfig:
    """What one HTTP fuzz adversary runs: both trees, the seeds, the server command, headers."""

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
    build: BuildSpec | None = None
    """the probe's fuzz_build (:mod:`.build`): both trees are built before they serve"""


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
    """Both trees' servers, started from one view path (:class:`.view.TreeView`), as the
    slot's uid."""

    def __init__(self, config: HttpConfig) -> None:
        self.config = config
        self.slot = config.spec.slot
        self.trees = TreeView(config)
        self.view = self.trees.view
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.ports: dict[str, int] = {}
        self.logs: dict[str, Path] = {}
        self.start_errors: dict[str, str] = {}

    def start(self) -> None:
        """(Re)start both servers: State A first, then the submission, each mounted at the
        view while it starts. A State A that will not serve is a harness fault."""
        self.stop()
        home = self.trees.workdir()
        env = self.trees.env(home)  # as the CLI domain's program gets it
        env["PYTHONDONTWRITEBYTECODE"] = "1"  # keeps a tree the server could write unchanged
        for role in ("original", "submission"):
            self.trees.mount(role)
            try:
                self.start_errors.pop(role, None)
                error = self._start_one(role, home, env)
            finally:
                self.trees.park()
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
            try:  # what other slots could see goes now; its scratch at the next start
                sandbox.wipe_shared(self.slot)
            except sandbox.SandboxError as exc:
                raise HarnessFault(str(exc)) from None
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


def _judge(config: HttpConfig, state: RoundState, servers: ServerPair, request: Request,
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
    script = http_candidate_script(adversary=config.adversary, seed=config.seed, request=trial,
                              expected=a, headers=config.headers, url_env=config.url_env)
    servers.stop()
    record = fuzz_view.judge_candidate(
        config, state, script, {"request": trial.to_dict(), "shrink_tests": tests}, (a, b)
    )
    servers.start()
    state.restarts += 1
    state.candidates.append(record)
    return record


def run_round(config: HttpConfig) -> dict[str, Any]:
    """The whole round; returns the result document (outcome broken|survived|error)."""
    started_wall, started = time.time(), time.monotonic()
    deadline = started + config.budget_sec
    state = RoundState()
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
                fuzz_view.grow_corpus(corpus, seen, key, request)
                continue
            state.differences += 1
            until = fuzz_view.shrink_deadline(config, deadline)
            record = _judge(config, state, servers, request, until)
            ended = fuzz_view.round_end(record)
            if ended is not None:
                outcome, reason = ended
                break
        else:
            if state.iterations == 0:
                raise HarnessFault("no request was sent within the budget")
            reason = fuzz_view.survived_reason(state, "requests")
        corpus_size = len(corpus)
    except HarnessFault as exc:
        outcome, reason = "error", str(exc)
    except OSError as exc:
        outcome, reason = "error", f"fuzzer I/O failure: {exc}"
    finally:
        if servers is not None:
            try:
                servers.stop()
            except HarnessFault as exc:  # a reset that cannot remove something: named
                outcome, reason = "error", str(exc)
    return fuzz_view.result_doc(
        config, outcome=outcome, reason=reason, started=(started_wall, started), state=state,
        corpus_size=corpus_size, domain="http",
    )  # fmt: skip


def main_fuzz_http(config: HttpConfig, result: Path | None) -> dict[str, Any]:
    """Run the round, clean the scratch folder, write and return the result."""
    doc = run_round(config)
    if sandbox.enabled():
        with contextlib.suppress(sandbox.SandboxError):
            sandbox.reset(config.spec.slot)
    return fuzz_view.finish(config, doc, result)


__all__ = ["DEFAULT_HEADERS", "HttpConfig", "Response", "exchange",
           "main_fuzz_http", "run_round"]
