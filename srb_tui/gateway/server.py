"""The host-side model gateway: per-run tokens in, real keys out, one ledger, budgets.

``Gateway.start`` listens on a Unix socket (``socket_dir/gateway.sock``, which the relay
sidecar of each agent container reaches through a bind mount of ``socket_dir``) and on TCP
``127.0.0.1:<ephemeral>`` (``tcp_url``, for the host-side stage drivers). Four paths are
forwarded, each to its one upstream (see ``vendor.ROUTES``); every other request is answered
here and counted as a probe, never forwarded. Tokens are kept in the store as hashes, so a
restarted srb accepts the tokens its previous process issued; budgets are stored too.

A run's spending is read from the store once, on its first budget check, and then kept up
to date in memory from the rows this gateway writes (only the gateway writes ledger rows),
so a request of a run with a budget costs no store read before its first byte.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hashlib
import logging
import secrets
import socket
import time
from dataclasses import dataclass
from pathlib import Path

import aiohttp
from aiohttp import web

from srb_tui.gateway.config import GatewayConfig
from srb_tui.gateway.forward import Outcome, cost_of, forward, upstream_proxy
from srb_tui.gateway.listen import SOCKET_NAME, GatewayError, tcp_socket, unix_socket
from srb_tui.gateway.usage import UsageMeter
from srb_tui.gateway.vendor import ROUTES, Route, error_body, vendor_of_path
from srb_tui.store import Store, StoreError
from srb_tui.store.ledger import GATEWAY_ROLES
from srb_tui.store.ledger_records import LedgerRow

LOG = logging.getLogger("srb.gateway")
TOKEN_PREFIX = "srb-gw-"
MAX_BODY_BYTES = 64 * 1024 * 1024
MAX_PROBE_KEYS = 256
_NO_RETRY = {"x-should-retry": "false"}


@dataclass
class Spent:
    """What a run has spent, as far as its budget check is concerned."""

    requests: int = 0
    cost_usd: float = 0.0
    total_tokens: int = 0

    def add(self, other: Spent) -> None:
        self.requests += other.requests
        self.cost_usd += other.cost_usd
        self.total_tokens += other.total_tokens


@dataclass
class Caller:
    """Who a token stands for."""

    token_hash: str
    run_id: str
    role: str
    round: int | None


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _token_of(request: web.Request) -> str | None:
    key = request.headers.get("x-api-key", "").strip()
    if key:
        return key
    auth = request.headers.get("Authorization", "")
    scheme, _, value = auth.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return None


class Gateway:
    """The running gateway of one srb process. Start with ``await Gateway.start(...)``."""

    def __init__(self, config: GatewayConfig, store: Store, socket_dir: Path) -> None:
        self.config = config
        self.store = store
        self.socket_dir = socket_dir
        self.tcp_url = ""
        self.session: aiohttp.ClientSession
        self._runner: web.AppRunner | None = None
        self._unix: socket.socket | None = None
        self._callers: dict[str, Caller] = {}
        self._budgets: dict[str, tuple[float | None, int | None]] = {}
        self._pending: set[asyncio.Task[object]] = set()
        self._probe_keys: set[tuple[str, str, str]] = set()
        self._inflight: dict[str, int] = {}
        self._spent: dict[str, Spent] = {}
        self._seeding: dict[str, tuple[asyncio.Future[Spent], Spent]] = {}
        self.proxies: dict[str, str | None] = {}
        self._settled = asyncio.Condition()
        self._closed = False

    @property
    def socket_path(self) -> Path:
        return self.socket_dir / SOCKET_NAME

    @classmethod
    async def start(cls, config: GatewayConfig, store: Store, socket_dir: Path) -> Gateway:
        """Listen on ``socket_dir/gateway.sock`` and on 127.0.0.1:<ephemeral port>."""
        gateway = cls(config, store, Path(socket_dir))
        unix = await unix_socket(gateway.socket_dir)
        try:
            tcp = tcp_socket()
        except GatewayError:
            unix.close()
            raise
        # The environment's proxy settings are honoured, but read once here: aiohttp's
        # trust_env reads them (and ~/.netrc) per request in worker threads, two thread
        # hops before every first byte.
        gateway.proxies = {
            vendor: upstream_proxy(config.upstream(vendor).root)
            for vendor in ("anthropic", "openai")
        }
        gateway.session = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=900),
            connector=aiohttp.TCPConnector(limit=0, limit_per_host=0),
            auto_decompress=True,
            trust_env=False,
        )
        app = web.Application(client_max_size=MAX_BODY_BYTES)
        app.router.add_route("*", "/{tail:.*}", gateway._handle)
        runner = web.AppRunner(app, access_log=None, handle_signals=False)
        try:
            await runner.setup()
            await web.SockSite(runner, unix).start()
            await web.SockSite(runner, tcp).start()
        except BaseException:
            await runner.cleanup()
            await gateway.session.close()
            unix.close()
            tcp.close()
            raise
        gateway._runner, gateway._unix = runner, unix
        host, port = tcp.getsockname()[:2]
        gateway.tcp_url = f"http://{host}:{port}"
        return gateway

    # ------------------------------------------------------------------ tokens

    async def issue_token(self, run_id: str, role: str, round: int | None = None) -> str:
        """A new random token for ``run_id`` acting as ``role`` (agent|reviewer|adversary)."""
        if role not in GATEWAY_ROLES:
            raise GatewayError(f"role {role!r} is not one of {', '.join(sorted(GATEWAY_ROLES))}")
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        digest = token_hash(token)
        await self.store.ledger.add_gateway_token(digest, run_id, role, round)
        self._callers[digest] = Caller(digest, run_id, role, round)
        return token

    async def set_round(self, token: str, round: int | None) -> None:
        """Attribute the token's next requests to ``round``."""
        digest = token_hash(token)
        await self.store.ledger.set_gateway_token_round(digest, round)
        caller = self._callers.get(digest)
        if caller is not None:
            caller.round = round

    async def revoke_run(self, run_id: str) -> None:
        """Every token of the run stops working (here and for a later srb process)."""
        await self.store.ledger.revoke_gateway_tokens(run_id)
        for digest in [d for d, c in self._callers.items() if c.run_id == run_id]:
            del self._callers[digest]

    async def _caller(self, request: web.Request) -> Caller | None:
        token = _token_of(request)
        if token is None:
            return None
        digest = token_hash(token)
        caller = self._callers.get(digest)
        if caller is not None:
            return caller
        record = await self.store.ledger.gateway_token(digest)
        if record is None or record.revoked_at is not None:
            return None
        caller = Caller(digest, record.run_id, record.role, record.round)
        self._callers[digest] = caller
        return caller

    # ------------------------------------------------------------------ budgets

    def set_budget(
        self, run_id: str, *, max_cost_usd: float | None, max_tokens: int | None
    ) -> None:
        """Set a run's budget now; it is written to the store in the background."""
        self._budgets[run_id] = (max_cost_usd, max_tokens)
        task: asyncio.Task[object] = asyncio.get_running_loop().create_task(
            self.store.ledger.set_run_budget(
                run_id, max_cost_usd=max_cost_usd, max_tokens=max_tokens
            )
        )
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _flush(self) -> None:
        if self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)

    async def _budget_of(self, run_id: str) -> tuple[float | None, int | None]:
        if run_id not in self._budgets:
            record = await self.store.ledger.run_budget(run_id)
            self._budgets[run_id] = (
                (record.max_cost_usd, record.max_tokens) if record else (None, None)
            )
        return self._budgets[run_id]

    async def settle(self, run_id: str | None = None) -> None:
        """Wait until every request of ``run_id`` (of any run: None) in flight now or later
        is finished and in the ledger. A streamed answer's row is written just after its
        last byte went out, so a reader that must see it calls this first."""
        async with self._settled:
            await self._settled.wait_for(
                lambda: not (self._inflight.get(run_id, 0) if run_id else any(
                    self._inflight.values()))
            )

    async def over_budget(self, run_id: str) -> str | None:
        """Why the run may make no more model requests, or None while budget is left.

        Waits for the run's requests in flight to be recorded first (see ``settle``)."""
        await self.settle(run_id)
        return await self._budget_reason(run_id)

    async def _budget_reason(self, run_id: str) -> str | None:
        await self._flush()
        max_cost, max_tokens = await self._budget_of(run_id)
        if max_cost is None and max_tokens is None:
            return None
        total = await self._spent_of(run_id)
        if max_cost is not None and total.cost_usd >= max_cost:
            return (
                f"budget: run {run_id} spent ${total.cost_usd:.4f} of its ${max_cost:.4f}"
                f" limit ({total.requests} model requests)"
            )
        if max_tokens is not None and total.total_tokens >= max_tokens:
            return (
                f"budget: run {run_id} used {total.total_tokens} tokens of its"
                f" {max_tokens} limit ({total.requests} model requests)"
            )
        return None

    async def _spent_of(self, run_id: str) -> Spent:
        """The run's spending: from the store the first time, then kept in memory. Rows
        written while the first read is under way are added to it too (a row may then
        count twice, which stops a run early rather than late)."""
        spent = self._spent.get(run_id)
        if spent is not None:
            return spent
        if run_id in self._seeding:
            return await asyncio.shield(self._seeding[run_id][0])
        future: asyncio.Future[Spent] = asyncio.get_running_loop().create_future()
        during = Spent()
        self._seeding[run_id] = (future, during)
        try:
            total = (await self.store.ledger.ledger_totals(run_id)).total
        except BaseException as err:
            del self._seeding[run_id]
            future.set_exception(err)
            future.exception()  # retrieved: waiters (if any) get it through shield
            raise
        spent = Spent(total.requests, total.cost_usd, total.total_tokens)
        spent.add(during)
        del self._seeding[run_id]
        self._spent[run_id] = spent
        future.set_result(spent)
        return spent

    def _note_spent(self, row: LedgerRow) -> None:
        delta = Spent(1, row.cost_usd or 0.0, row.total_tokens)
        if row.run_id in self._spent:
            self._spent[row.run_id].add(delta)
        elif row.run_id in self._seeding:
            self._seeding[row.run_id][1].add(delta)

    # ------------------------------------------------------------------ requests

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        route = ROUTES.get(request.path)
        if route is None or request.method != "POST":
            return await self._probe(request)
        caller = await self._caller(request)
        if caller is None:
            await self._count_probe(None, request, 401)
            message = "srb gateway: invalid x-api-key (unknown or revoked token)"
            return web.Response(
                status=401, body=error_body(route.vendor, 401, message, code="invalid_api_key"),
                content_type="application/json", headers=_NO_RETRY,
            )
        reason = await self._budget_reason(caller.run_id)
        if reason is not None:
            return self._budget_refusal(route, reason)
        run = caller.run_id
        self._inflight[run] = self._inflight.get(run, 0) + 1
        try:
            return await forward(self, route, caller, request)
        finally:
            self._inflight[run] -= 1
            if not self._inflight[run]:
                del self._inflight[run]
            async with self._settled:
                self._settled.notify_all()

    def _budget_refusal(self, route: Route, reason: str) -> web.Response:
        if route.vendor == "anthropic":
            status = 400
            message = f"You have reached your specified API usage limits (srb {reason})"
            body = error_body("anthropic", status, message)
        else:
            status = 429
            message = f"You exceeded your current quota (srb {reason})"
            body = error_body("openai", status, message, code="insufficient_quota")
        return web.Response(
            status=status, body=body, content_type="application/json", headers=_NO_RETRY
        )

    async def _probe(self, request: web.Request) -> web.StreamResponse:
        """Answer a path that is not forwarded, here and cheaply."""
        caller = await self._caller(request)
        path = request.path
        if request.method == "HEAD":
            response = web.Response(status=200)
        elif path == "/v1/models" and request.method == "GET":
            response = web.json_response(
                # Empty in the OpenAI/Anthropic list shape (and Codex's "models" key).
                {"object": "list", "data": [], "models": [], "has_more": False,
                 "first_id": None, "last_id": None}
            )
        elif path.startswith("/api/") or path == "/":
            response = web.json_response({})
        else:
            vendor = vendor_of_path(path)
            message = f"srb gateway: {request.method} {path[:200]} is not served"
            response = web.Response(
                status=404, body=error_body(vendor, 404, message), content_type="application/json"
            )
        await self._count_probe(caller, request, response.status)
        return response

    async def _count_probe(self, caller: Caller | None, request: web.Request, status: int) -> None:
        run = caller.run_id if caller else ""
        path = request.path[:200]
        key = (run, request.method, path)
        if key not in self._probe_keys:
            if len(self._probe_keys) >= MAX_PROBE_KEYS:
                key = (run, request.method, "(other paths)")
            else:
                self._probe_keys.add(key)
        await self.store.ledger.record_probe(run or None, key[1], key[2], status)

    async def record(
        self,
        caller: Caller,
        route: Route,
        asked: str | None,
        sent: str | None,
        meter: UsageMeter,
        outcome: Outcome,
        started: float,
    ) -> LedgerRow | None:
        """Write the ledger row of one forwarded request (None, logged, if the store
        refuses it: the client's answer is not held up by a bookkeeping failure)."""
        error = outcome.error
        if error is None and meter.error is not None:
            error = f"upstream error: {meter.error}"
        usage = dict(meter.usage)
        try:
            row = await self.store.ledger.add_ledger_row(
                caller.run_id,
                caller.role,
                round=caller.round,
                route=route.path,
                model=asked,
                upstream_model=sent if sent != asked else None,
                status=outcome.status,
                latency_ms=(time.monotonic() - started) * 1000.0,
                streamed=outcome.streamed,
                usage=usage,
                cost_usd=cost_of(self.config.prices, usage, sent, asked, meter.model),
                error=error,
            )
            self._note_spent(row)
            return row
        except StoreError as err:
            LOG.warning("gateway: ledger row of run %s not recorded: %s", caller.run_id, err)
            return None

    # ------------------------------------------------------------------ shutdown

    async def close(self) -> None:
        """Stop listening, finish pending writes, remove the socket file (not its folder:
        relays keep it bind-mounted for the next gateway)."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._runner is not None:
                await self._runner.cleanup()
        finally:
            await self.session.close()
            await self._flush()
            with contextlib.suppress(OSError):
                if self._unix is not None:
                    self._unix.close()
            try:
                self.socket_path.unlink()
            except OSError as err:
                if err.errno != errno.ENOENT:
                    raise

    async def __aenter__(self) -> Gateway:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
