"""Async runner over docker-py: images, containers, logs, archives and cleanup.

This package is the only place in srb that imports ``docker``. Every blocking
docker-py call runs on srb's own thread pool (:mod:`srb_tui.runner.pool`), never
on asyncio's default executor.
"""

from typing import TYPE_CHECKING

from srb_tui.lazy import exports_on_first_use

if TYPE_CHECKING:
    from srb_tui.runner.budget import DiskCap, ExitInfo, ExitReason, wait_with_budget
    from srb_tui.runner.collect import collect_submission
    from srb_tui.runner.containers import (
        ContainerHandle,
        ContainerState,
        ExecResult,
        create,
        exec_run,
        inspect_state,
        kill,
        put_tree,
        remove,
        start,
    )
    from srb_tui.runner.engine import DockerEngine, EngineInfo
    from srb_tui.runner.errors import (
        CollectError,
        ContainerError,
        EngineUnavailable,
        ImageBuildError,
        RunnerError,
    )
    from srb_tui.runner.extract import CollectResult, ExtractLimits
    from srb_tui.runner.images import (
        ImageInfo,
        build_image,
        inspect_image,
        list_images,
        prune_images,
    )
    from srb_tui.runner.logs import LogCursor, LogFollower, cursors_after
    from srb_tui.runner.pool import RunnerPool
    from srb_tui.runner.reaper import GcReport, ManagedContainer, gc, list_managed, reap, reattach
    from srb_tui.runner.spec import (
        LABEL_STORE,
        Bind,
        ContainerLogLine,
        ContainerSpec,
        Stream,
        store_tag,
    )
    from srb_tui.runner.workspace import WorkspaceImage, workspace_image

__all__ = [
    "LABEL_STORE",
    "Bind",
    "CollectError",
    "CollectResult",
    "ContainerError",
    "ContainerHandle",
    "ContainerLogLine",
    "ContainerSpec",
    "ContainerState",
    "DiskCap",
    "DockerEngine",
    "EngineInfo",
    "EngineUnavailable",
    "ExecResult",
    "ExitInfo",
    "ExitReason",
    "ExtractLimits",
    "GcReport",
    "ImageBuildError",
    "ImageInfo",
    "LogCursor",
    "LogFollower",
    "ManagedContainer",
    "RunnerError",
    "RunnerPool",
    "Stream",
    "WorkspaceImage",
    "build_image",
    "collect_submission",
    "create",
    "cursors_after",
    "exec_run",
    "gc",
    "inspect_image",
    "inspect_state",
    "kill",
    "list_images",
    "list_managed",
    "prune_images",
    "put_tree",
    "reap",
    "reattach",
    "remove",
    "start",
    "store_tag",
    "wait_with_budget",
    "workspace_image",
]

__getattr__ = exports_on_first_use(__name__)
