"""``srb doctor``: is this machine ready to run tasks?"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import sqlite3
import tempfile
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from rich.markup import escape

from srb_tui import __version__
from srb_tui.commands import exit_codes as codes
from srb_tui.commands.output import Output
from srb_tui.config import Settings


@dataclass(frozen=True)
class Check:
    """One line of `srb doctor`: what was checked, whether it passed, and the fix."""

    name: str
    ok: bool
    detail: str
    fix: str = ""
    #: Passed, but something is missing for some uses (a vendor key not set): shown as
    #: ``!`` in yellow, never ✓, and does not fail doctor (replay agents need no key).
    warn: bool = False


def add_parser(sub: Any) -> None:
    p = sub.add_parser("doctor", help="check the engine, base image, state directory, versions")
    p.add_argument("--json", action="store_true", help="one JSON document on stdout")
    p.add_argument("--deep", action="store_true",
                   help="check the store with PRAGMA integrity_check (indexes against their "
                        "tables) instead of quick_check")
    p.add_argument("--recover", action="store_true",
                   help="rebuild a damaged store into a new file (the damaged one moves to "
                        "damaged-STAMP/ beside it) and exit")
    p.set_defaults(handler=cmd_doctor)


def _state_writable(settings: Settings) -> Check:
    try:
        settings.state_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=settings.state_dir, prefix=".doctor-"):
            pass
    except OSError as exc:
        return Check("state directory", False, f"{settings.state_dir}: {exc}",
                     "choose another with --state DIR or SRB_STATE_DIR")
    return Check("state directory", True, f"{settings.state_dir} is writable")


def _store(settings: Settings, deep: bool = False) -> Check:
    from srb_tui.store import Store, StoreError
    from srb_tui.store.health import damage_message, recovery_steps

    if not settings.db_path.exists():
        return Check("store", True, f"{settings.db_path} will be created on first run")
    pragma = "integrity_check" if deep else "quick_check"

    async def probe() -> tuple[int, list[str]]:
        async with await Store.open(settings.db_path) as store:
            return await store.runs.count_runs(), await store.check_integrity(deep=deep)

    try:
        n, problems = asyncio.run(probe())
    except StoreError as exc:
        return Check("store", False, str(exc), recovery_steps(settings.db_path))
    if problems:
        return Check("store", False,
                     damage_message(settings.db_path, problems, check=pragma).split("\n")[0],
                     recovery_steps(settings.db_path))
    return Check("store", True, f"{settings.db_path}: {n} run(s), PRAGMA {pragma}: ok")


def _recover(settings: Settings, out: Output) -> int:
    from srb_tui.store import StoreError
    from srb_tui.store.recover import rebuild

    if not settings.db_path.exists():
        out.error(f"no store at {settings.db_path}: nothing to recover")
        return codes.NOT_FOUND
    try:
        report = rebuild(settings.db_path)
    except StoreError as exc:
        out.error(str(exc))
        return codes.FAILED
    if out.json_mode:
        out.emit_json({"store": str(settings.db_path), "copied": report.copied,
                       "unreadable": report.unreadable,
                       "damaged": str(report.damaged_folder)})
        return codes.OK
    rows = sum(report.copied.values())
    out.print(f"rebuilt {escape(str(settings.db_path))}: {rows} row(s) in "
              f"{len(report.copied)} table(s); integrity_check ok")
    for table, lost in report.unreadable.items():
        out.print(f"[yellow]![/] {escape(table)}: {escape(lost)}")
    out.print(f"the damaged file is in {escape(str(report.damaged_folder))}")
    return codes.OK


def _engine_and_image(settings: Settings) -> list[Check]:
    return asyncio.run(_engine_checks(settings))


async def _engine_checks(settings: Settings) -> list[Check]:
    from srb_tui.service.app import BackendConfigError, open_service

    async with open_service(settings) as core:
        try:
            config = core.backend_config()
        except BackendConfigError as exc:
            return [Check("execution backend", False, str(exc), "fix state/config.toml")]
        if config.local:
            return await _probe_engine(core.engine, settings)
        return await _probe_pool(core, settings)


OWN_ENGINE = "srb's engine (base image source)"


async def _probe_pool(core: Any, settings: Settings) -> list[Check]:
    """srb's own engine (where `srb images bootstrap` made the base image, copied from it to
    each node on its first run), then one line per engine of the pool: version, capacity,
    srb's running containers, or what is wrong with it; and whether srb's base image is
    there (else it is brought to the node when a run is first placed there)."""
    from srb_tui.runner.query import image_exists
    from srb_tui.service.nodes import bare_error, node_advice

    try:
        backend = await core.backend()
    except Exception as exc:  # a bad config, a swarm manager that does not answer
        return [Check("execution backend", False, str(exc),
                      "check [backend] in state/config.toml and that the manager answers")]
    checks = [Check("execution backend", True,
                    f"{backend.kind}: {len(backend.nodes)} engine(s)"
                    + (f", registry {backend.registry}" if backend.registry else ""))]
    checks.append(await _own_engine(core.engine, settings, backend.registry))
    for health in await backend.probe_all():
        node = backend.nodes[health.name]
        if not health.up:
            checks.append(Check(f"engine {health.name}", False,
                                f"{health.url}: {bare_error(health.error, health.url)}",
                                node_advice(health.url)))
            continue
        base = await image_exists(node.engine, settings.base_image)
        checks.append(Check(
            f"engine {health.name}", True,
            f"{health.url}: server {health.version}, {node.cpus:g} CPUs, "
            f"{node.memory_mb} MB, {health.containers} srb container(s) running, base image "
            f"{'present' if base else 'missing (brought on its first run)'}"))
    return checks


async def _own_engine(engine: Any, settings: Settings, registry: str | None) -> Check:
    """srb's own engine in pool mode: the source of the base image for every node (a
    registry, when configured, serves the nodes instead: then only a warning)."""
    from srb_tui.runner.query import image_exists
    from srb_tui.service.nodes import bare_error, engine_advice

    info = await engine.ping()
    if not info.ok:
        error = bare_error(info.error or "unreachable", engine.base_url)
        if registry:
            return Check(OWN_ENGINE, True, f"{engine.base_url}: {error} (nodes pull the "
                         f"base image from {registry})",
                         engine_advice(engine.base_url), warn=True)
        return Check(OWN_ENGINE, False, f"{engine.base_url}: {error}",
                     engine_advice(engine.base_url) + " A node without the base image gets it "
                     "copied from this engine on its first run.")
    present = await image_exists(engine, settings.base_image)
    if not present:
        return Check(OWN_ENGINE, bool(registry),
                     f"{engine.base_url}: server {info.version}, {settings.base_image} missing",
                     "run `srb images bootstrap` here (nodes get the base image from this "
                     "engine)", warn=bool(registry))
    return Check(OWN_ENGINE, True,
                 f"{engine.base_url}: server {info.version}, {settings.base_image} present")


async def _probe_engine(engine: Any, settings: Settings) -> list[Check]:
    from srb_tui.runner.query import image_exists

    info = await engine.ping()
    checks = []
    if not info.ok:
        checks.append(Check("docker engine", False, info.error or "unreachable",
                            "run `bash scripts/ensure-docker.sh` (installs docker.io and "
                            "starts dockerd when you are root)"))
        checks.append(Check("base image", False, f"{settings.base_image}: engine unreachable",
                            "start the engine first"))
        return checks
    checks.append(Check("docker engine", True, f"server {info.version} (API {info.api_version})"))
    present = await image_exists(engine, settings.base_image)
    checks.append(Check(
        "base image", present,
        f"{settings.base_image} {'present' if present else 'missing'}",
        "" if present else "run `srb images bootstrap` (debootstrap, docker import)",
    ))
    return checks


def _image_map(settings: Settings) -> Check:
    """``[images]`` of state/config.toml: every value a local image reference."""
    from srb_tui.service.run.images import ImageMapError, load_image_map

    try:
        mapped = load_image_map(settings.state_dir)
    except ImageMapError as exc:
        return Check("image map", False, str(exc), "fix [images] in state/config.toml")
    return Check("image map", True, f"{len(mapped)} image(s) mapped to local ones")


def _client_checks(settings: Settings) -> list[Check]:
    """Cached agent clients, and each configured model upstream (whether its key is set
    on this host — never the key itself)."""
    from srb_tui.service.app import GatewayConfigError
    from srb_tui.service.run.agent_specs import client_cache_summary, upstream_summaries

    checks: list[Check] = [Check("agent clients", True, client_cache_summary()),
                           _image_map(settings)]
    try:
        upstreams = upstream_summaries(settings.state_dir)
    except GatewayConfigError as exc:
        checks.append(Check("model gateway", False, str(exc), "fix state/config.toml"))
        return checks
    checks.extend(
        Check(f"upstream {vendor}", True, line,
              "export the key to run real agents of this vendor" if unset else "", warn=unset)
        for vendor, line in upstreams
        for unset in (line.endswith(" not set"),)
    )
    return checks


def _versions() -> dict[str, str]:
    out = {"srb": __version__, "python": platform.python_version(),
           "sqlite": sqlite3.sqlite_version}
    for dist in ("textual", "docker", "aiosqlite", "rich"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "missing"
    return out


def cmd_doctor(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    if args.recover:
        return _recover(settings, out)
    checks = [_state_writable(settings), _store(settings, args.deep),
              *_engine_and_image(settings)]
    roots = [str(r) for r in settings.task_roots]
    checks.append(Check("task roots", all(os.path.isdir(r) for r in roots), ", ".join(roots),
                        "pass --tasks DIR or set SRB_TASKS"))
    checks += _client_checks(settings)
    versions = _versions()
    ok = all(c.ok for c in checks)
    if out.json_mode:
        out.emit_json({"ok": ok, "checks": [c.__dict__ for c in checks], "versions": versions})
        return codes.OK if ok else codes.FAILED
    for c in checks:
        mark = "[yellow]![/]" if c.ok and c.warn else "[green]✓[/]" if c.ok else "[red]✗[/]"
        out.print(f"{mark} {c.name}: {escape(c.detail)}")
        if (not c.ok or c.warn) and c.fix:
            out.print(f"    fix: {escape(c.fix)}")
    out.print("versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    return codes.OK if ok else codes.FAILED
