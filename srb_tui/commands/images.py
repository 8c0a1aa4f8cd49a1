"""``srb images bootstrap|build|ls|prune``: the base image and the task images."""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
from pathlib import Path
from typing import Any

from rich.markup import escape

from srb_tui.commands import exit_codes as codes
from srb_tui.commands.arg_read import usable_task
from srb_tui.commands.output import Output, plain_columns
from srb_tui.config import Settings
from srb_tui.service.app import Services, open_service
from srb_tui.service.run.images import (
    ImageBuildError,
    ImageMapError,
    build_task_images,
    list_images,
    load_image_map,
    prune_images,
)

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bootstrap-base.sh"


def add_parser(sub: Any) -> None:
    p = sub.add_parser("images", help="bootstrap the base image, build task images, list, prune")
    isub = p.add_subparsers(dest="images_command", metavar="ACTION", required=True)
    boot = isub.add_parser("bootstrap", help="debootstrap Debian bookworm and docker-import it")
    boot.add_argument("--force", action="store_true", help="rebuild even if present")
    boot.set_defaults(handler=cmd_bootstrap)
    build = isub.add_parser("build", help="build a task's agent and stage images")
    build.add_argument("task_id", metavar="TASK")
    build.add_argument("--force", action="store_true", help="rebuild even if unchanged")
    build.add_argument("--json", action="store_true")
    build.set_defaults(handler=cmd_build)
    ls = isub.add_parser("ls", help="images srb built")
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(handler=cmd_ls)
    prune = isub.add_parser("prune", help="remove dangling srb images")
    prune.add_argument("--json", action="store_true")
    prune.set_defaults(handler=cmd_prune)


def cmd_bootstrap(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    if not SCRIPT.is_file():
        out.error(f"{SCRIPT} not found; bootstrap from a source checkout of srb")
        return codes.NOT_FOUND
    env_args = ["--force"] if args.force else []
    done = subprocess.run(["bash", str(SCRIPT), *env_args],
                          env={**os.environ, "SRB_BASE_IMAGE": settings.base_image},
                          check=False)
    if done.returncode != 0:
        out.error(f"{SCRIPT.name} exited {done.returncode}: no base image "
                  f"{settings.base_image} made (its output above says why)")
        return codes.INFRA
    return codes.OK


def cmd_build(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    load = usable_task(Services(settings).catalog, settings, args.task_id, out)
    if isinstance(load, int):
        return load
    task = load.task

    try:
        image_map = load_image_map(settings.state_dir)
    except ImageMapError as exc:
        out.error(escape(str(exc)))
        return codes.USAGE

    async def body() -> int:
        async def on_log(role: str, line: str) -> None:
            if not out.json_mode:
                out.err.print(f"[dim]{role}:[/] {escape(line)}")

        async with open_service(settings) as services:
            try:
                done = await build_task_images(services.engine, task,
                                               base_image=settings.base_image,
                                               image_map=image_map, force=args.force,
                                               on_log=on_log)
            except ImageBuildError as exc:
                out.error(escape(f"{load.task_id}: {exc}"))
                return codes.INFRA
        built = [{"role": role, "tag": info.tag, "id": info.id, "built": info.built,
                  "buildargs": dict(info.buildargs),
                  "image_map": [list(pair) for pair in info.substitutions]}
                 for role, info in done]
        if out.json_mode:
            out.emit_json({"task": load.task_id, "images": built})
        else:
            for row in built:
                state = "built" if row["built"] else "unchanged"
                out.print(f"{row['role']:13} {escape(str(row['tag']))}  {str(row['id'])[:19]}"
                          f"  {state}")
        return codes.OK

    return asyncio.run(body())


def cmd_ls(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    async def body() -> int:
        async with open_service(settings) as services:
            images = await list_images(services.engine)
        if out.json_mode:
            out.emit_json({"images": [{"tag": i.tag, "id": i.id, "context": i.context_sha}
                                      for i in images]})
        elif images:
            out.lines(plain_columns([("IMAGE", "ID"), *((i.tag, i.id[:19]) for i in images)])
                      .splitlines())
        else:
            out.print("No srb images yet.")
        return codes.OK

    return asyncio.run(body())


def cmd_prune(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    async def body() -> int:
        async with open_service(settings) as services:
            reclaimed = await prune_images(services.engine)
        if out.json_mode:
            out.emit_json({"bytes_reclaimed": reclaimed})
        else:
            out.print(f"reclaimed {reclaimed} bytes")
        return codes.OK

    return asyncio.run(body())
