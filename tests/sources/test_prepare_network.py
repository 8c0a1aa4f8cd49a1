"""prepare_state_a for url, pypi and npm kinds.

The server is a local stand-in on 127.0.0.1 (``http.server``) speaking the same protocol
as the real indexes: the PyPI JSON API (``/pypi/<name>/<version>/json`` and the project
document ``/pypi/<name>/json``) and the npm registry document shape
(``/<name>/<version>`` with ``dist.tarball``). No test here reaches the internet.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from srb_tui.schema.state_a import StateASource
from srb_tui.sources import StateAError, prepare_state_a
from tests.sources.helpers import SAMPLE, LocalServer, cache_files, make_tarball, sha256


@pytest.fixture
def task(tmp_path: Path) -> Path:
    path = tmp_path / "net-task"
    path.mkdir()
    return path


def test_url_kind_downloads_verifies_and_serves_cache_offline(
    http_server: LocalServer, task: Path, tmp_path: Path
) -> None:
    data = make_tarball(SAMPLE, prefix="proj-2.0")
    url = http_server.add("/files/proj-2.0.tar.gz", data)
    source = StateASource("url", sha256(data), url=url, strip_components=1)
    cache_dir = tmp_path / "cache"
    first = prepare_state_a(task, source, cache_dir)
    assert first.archive == cache_dir / sha256(data) / "archive" / "proj-2.0.tar.gz"
    assert first.archive.read_bytes() == data
    assert first.file_count == len(SAMPLE)
    assert first.source == f"url {url}"
    assert http_server.requests == ["/files/proj-2.0.tar.gz"]
    second = prepare_state_a(task, source, cache_dir)
    assert second.from_cache and second.tree == first.tree
    assert http_server.requests == ["/files/proj-2.0.tar.gz"]  # cache hit: no request
    http_server.stop()
    third = prepare_state_a(task, source, cache_dir, offline=True)
    assert third.content_digest == first.content_digest


def test_url_kind_wrong_hash_leaves_nothing(
    http_server: LocalServer, task: Path, tmp_path: Path
) -> None:
    data = make_tarball(SAMPLE)
    url = http_server.add("/a.tar.gz", data)
    pinned = "ab" * 32
    cache_dir = tmp_path / "cache"
    with pytest.raises(StateAError) as caught:
        prepare_state_a(task, StateASource("url", pinned, url=url), cache_dir)
    assert str(caught.value) == (
        f"net-task: sha256 mismatch for {url}: expected {pinned} (task.toml "
        f"[srb.state_a].sha256), got {sha256(data)} ({len(data)} bytes); nothing was kept"
    )
    assert cache_files(cache_dir) == []


def test_url_kind_server_gone_and_offline_flag(
    http_server: LocalServer, task: Path, tmp_path: Path
) -> None:
    data = make_tarball(SAMPLE)
    url = http_server.add("/a.tar.gz", data)
    source = StateASource("url", sha256(data), url=url)
    cache_dir = tmp_path / "cache"
    with pytest.raises(StateAError, match=r"^net-task: offline, and State A \(url "):
        prepare_state_a(task, source, cache_dir, offline=True)
    assert http_server.requests == []
    http_server.stop()
    with pytest.raises(StateAError) as caught:
        prepare_state_a(task, source, cache_dir)
    assert str(caught.value).startswith(f"net-task: {url}: cannot connect (")
    assert cache_files(cache_dir) == []


def test_offline_from_environment_variable(
    http_server: LocalServer, task: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = http_server.add("/a.tar.gz", make_tarball(SAMPLE))
    monkeypatch.setenv("SRB_OFFLINE", "1")
    with pytest.raises(StateAError, match="offline"):
        prepare_state_a(task, StateASource("url", "0" * 64, url=url), tmp_path / "cache")
    assert http_server.requests == []


def test_http_404_names_the_url(http_server: LocalServer, task: Path, tmp_path: Path) -> None:
    url = http_server.base + "/missing.tar.gz"
    with pytest.raises(StateAError, match=f"^net-task: {url}: not found \\(HTTP 404\\)$"):
        prepare_state_a(task, StateASource("url", "0" * 64, url=url), tmp_path / "cache")


def pypi_file(filename: str, url: str, data: bytes, packagetype: str) -> dict[str, object]:
    return {
        "filename": filename,
        "url": url,
        "packagetype": packagetype,
        "size": len(data),
        "digests": {"sha256": sha256(data), "md5": "x"},
    }


def test_pypi_kind_picks_the_sdist(http_server: LocalServer, task: Path, tmp_path: Path) -> None:
    sdist = make_tarball(SAMPLE, prefix="demo-1.2")
    wheel = b"PK-not-really-a-wheel"
    sdist_url = http_server.add("/packages/demo-1.2.tar.gz", sdist)
    http_server.add("/packages/demo-1.2-py3-none-any.whl", wheel)
    document = {
        "info": {"name": "demo", "version": "1.2"},
        "urls": [
            pypi_file(
                "demo-1.2-py3-none-any.whl",
                "../../../packages/demo-1.2-py3-none-any.whl",
                wheel,
                "bdist_wheel",
            ),
            pypi_file("demo-1.2.tar.gz", sdist_url, sdist, "sdist"),
        ],
    }
    http_server.add("/pypi/demo/1.2/json", json.dumps(document).encode())
    source = StateASource("pypi", sha256(sdist), spec="demo==1.2", strip_components=1)
    prepared = prepare_state_a(
        task, source, tmp_path / "cache", pypi_url=http_server.base + "/pypi"
    )
    assert prepared.archive is not None and prepared.archive.name == "demo-1.2.tar.gz"
    assert prepared.file_count == len(SAMPLE)
    assert prepared.source == f"pypi demo==1.2 ({sdist_url})"
    assert http_server.requests == ["/pypi/demo/1.2/json", "/packages/demo-1.2.tar.gz"]


def test_pypi_project_document_fallback_and_relative_url(
    http_server: LocalServer, task: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Some mirrors answer only the project document, with relative file URLs."""
    sdist = make_tarball(SAMPLE, prefix="demo-1.2")
    http_server.add("/packages/d/demo-1.2.tar.gz", sdist)
    document = {
        "releases": {
            "1.2": [
                pypi_file("demo-1.2.tar.gz", "../../packages/d/demo-1.2.tar.gz", sdist, "sdist")
            ]
        }
    }
    http_server.add("/pypi/demo/json", json.dumps(document).encode())
    monkeypatch.setenv("SRB_PYPI_URL", http_server.base + "/pypi")
    source = StateASource("pypi", sha256(sdist), spec="demo==1.2", strip_components=1)
    prepared = prepare_state_a(task, source, tmp_path / "cache")
    assert prepared.file_count == len(SAMPLE)
    assert http_server.requests == [
        "/pypi/demo/1.2/json",
        "/pypi/demo/json",
        "/packages/d/demo-1.2.tar.gz",
    ]


def test_pypi_listed_digest_disagrees_before_download(
    http_server: LocalServer, task: Path, tmp_path: Path
) -> None:
    sdist = make_tarball(SAMPLE)
    url = http_server.add("/packages/demo-1.2.tar.gz", sdist)
    document = {"urls": [pypi_file("demo-1.2.tar.gz", url, sdist, "sdist")]}
    http_server.add("/pypi/demo/1.2/json", json.dumps(document).encode())
    pinned = "cd" * 32
    with pytest.raises(StateAError) as caught:
        prepare_state_a(
            task,
            StateASource("pypi", pinned, spec="demo==1.2"),
            tmp_path / "cache",
            pypi_url=http_server.base + "/pypi",
        )
    assert str(caught.value) == (
        f"net-task: PyPI lists demo-1.2.tar.gz with sha256 {sha256(sdist)}, but task.toml "
        f"[srb.state_a].sha256 pins {pinned} ({http_server.base}/pypi/demo/1.2/json); "
        "nothing was downloaded"
    )
    assert http_server.requests == ["/pypi/demo/1.2/json"]
    assert cache_files(tmp_path / "cache") == []


def test_pypi_unknown_release(http_server: LocalServer, task: Path, tmp_path: Path) -> None:
    http_server.add("/pypi/demo/json", json.dumps({"releases": {"1.0": []}}).encode())
    with pytest.raises(StateAError, match=r"PyPI has no release demo==9\.9 "):
        prepare_state_a(
            task,
            StateASource("pypi", "0" * 64, spec="demo==9.9"),
            tmp_path / "cache",
            pypi_url=http_server.base + "/pypi",
        )


def test_npm_kind_scoped_package(http_server: LocalServer, task: Path, tmp_path: Path) -> None:
    tgz = make_tarball(SAMPLE, prefix="package")
    tarball_url = http_server.add("/@scope/widget/-/widget-3.1.4.tgz", tgz)
    document = {
        "name": "@scope/widget",
        "version": "3.1.4",
        "dist": {"tarball": tarball_url, "shasum": "x", "integrity": "sha512-x"},
    }
    http_server.add("/@scope%2Fwidget/3.1.4", json.dumps(document).encode())
    source = StateASource("npm", sha256(tgz), spec="@scope/widget@3.1.4", strip_components=1)
    prepared = prepare_state_a(task, source, tmp_path / "cache", npm_registry=http_server.base)
    assert prepared.archive is not None and prepared.archive.name == "widget-3.1.4.tgz"
    assert (prepared.tree / "pkg/core.py").read_bytes() == SAMPLE["pkg/core.py"]
    assert http_server.requests == ["/@scope%2Fwidget/3.1.4", "/@scope/widget/-/widget-3.1.4.tgz"]


def test_npm_packument_fallback(
    http_server: LocalServer, task: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tgz = make_tarball(SAMPLE, prefix="package")
    http_server.add("/widget/-/widget-1.0.0.tgz", tgz)
    packument = {
        "name": "widget",
        "versions": {"1.0.0": {"dist": {"tarball": "/widget/-/widget-1.0.0.tgz"}}},
    }
    http_server.add("/widget", json.dumps(packument).encode())
    monkeypatch.setenv("SRB_NPM_REGISTRY", http_server.base)
    prepared = prepare_state_a(
        task,
        StateASource("npm", sha256(tgz), spec="widget@1.0.0", strip_components=1),
        tmp_path / "cache",
    )
    assert prepared.file_count == len(SAMPLE)
    assert http_server.requests == ["/widget/1.0.0", "/widget", "/widget/-/widget-1.0.0.tgz"]


def test_new_strip_variant_is_made_from_the_cached_archive(
    http_server: LocalServer, task: Path, tmp_path: Path
) -> None:
    data = make_tarball(SAMPLE, prefix="proj")
    url = http_server.add("/proj.tar.gz", data)
    cache_dir = tmp_path / "cache"
    flat = prepare_state_a(task, StateASource("url", sha256(data), url=url), cache_dir)
    http_server.stop()
    stripped = prepare_state_a(
        task, StateASource("url", sha256(data), url=url, strip_components=1), cache_dir
    )
    assert (flat.tree / "proj/README.md").is_file()
    assert (stripped.tree / "README.md").is_file()
    assert stripped.source == "url " + url + " (cached proj.tar.gz)"
    assert http_server.requests == ["/proj.tar.gz"]
