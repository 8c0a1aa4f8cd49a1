"""Resolve a pinned registry package to the URL of its source archive.

PyPI: the JSON API (``<base>/<name>/<version>/json``, falling back to the project
document ``<base>/<name>/json`` and its ``releases[version]``), picking the sdist.
npm: the registry document (``<registry>/<name>/<version>``, falling back to
``<registry>/<name>`` and ``versions[version]``), taking ``dist.tarball``.
Base URLs default to the public indexes and can be changed with ``SRB_PYPI_URL`` and
``SRB_NPM_REGISTRY`` (or the callers' parameters), e.g. for a mirror.
"""

from __future__ import annotations

import os
import urllib.parse
from dataclasses import dataclass

from srb_tui.sources.download import NotFound, fetch_json
from srb_tui.sources.errors import StateAError

DEFAULT_PYPI_URL = "https://pypi.org/pypi"
DEFAULT_NPM_REGISTRY = "https://registry.npmjs.org"


@dataclass(frozen=True)
class ResolvedArchive:
    """Where to download a package's source archive, and what the index says of it."""

    url: str
    filename: str
    listed_sha256: str | None  # the index's own digest, when it publishes one
    index_url: str  # the document the URL was read from


def pypi_base(override: str | None = None) -> str:
    return (override or os.environ.get("SRB_PYPI_URL") or DEFAULT_PYPI_URL).rstrip("/")


def npm_base(override: str | None = None) -> str:
    return (override or os.environ.get("SRB_NPM_REGISTRY") or DEFAULT_NPM_REGISTRY).rstrip("/")


def _as_list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _sdist_rank(entry: dict[str, object], pinned: str) -> tuple[int, int]:
    digests = entry.get("digests")
    listed = digests.get("sha256") if isinstance(digests, dict) else None
    name = str(entry.get("filename", ""))
    return (0 if listed == pinned else 1, 0 if name.endswith(".tar.gz") else 1)


def _listed_version(index_url: str, key: str, version: str, *, no_project: str,
                    no_version: str) -> object:
    """``version``'s entry under ``key`` of the project's document at ``index_url`` (where a
    registry without a document of the version itself lists it)."""
    try:
        listed = fetch_json(index_url).get(key)
    except NotFound as exc:
        raise StateAError(f"{no_project} ({index_url})") from exc
    if not isinstance(listed, dict) or version not in listed:
        raise StateAError(f"{no_version} ({index_url})") from None
    return listed[version]


def resolve_pypi(
    name: str, version: str, pinned_sha256: str, base: str | None = None
) -> ResolvedArchive:
    """The sdist of ``name==version``; the one whose listed digest is the pinned one wins."""
    root = pypi_base(base)
    quoted = urllib.parse.quote(name, safe="")
    index_url = f"{root}/{quoted}/{urllib.parse.quote(version, safe='')}/json"
    try:
        files = _as_list(fetch_json(index_url).get("urls"))
    except NotFound:
        index_url = f"{root}/{quoted}/json"
        files = _as_list(_listed_version(
            index_url, "releases", version, no_project=f"PyPI has no project '{name}'",
            no_version=f"PyPI has no release {name}=={version}"))
    sdists = [
        f
        for f in files
        if isinstance(f, dict) and f.get("packagetype") == "sdist" and isinstance(f.get("url"), str)
    ]
    if not sdists:
        raise StateAError(f"PyPI lists no source distribution for {name}=={version} ({index_url})")
    best = min(sdists, key=lambda entry: _sdist_rank(entry, pinned_sha256))
    digests = best.get("digests")
    listed = digests.get("sha256") if isinstance(digests, dict) else None
    url = urllib.parse.urljoin(index_url, str(best["url"]))
    filename = str(best.get("filename") or url.rsplit("/", 1)[-1])
    return ResolvedArchive(url, filename, listed if isinstance(listed, str) else None, index_url)


def resolve_npm(name: str, version: str, base: str | None = None) -> ResolvedArchive:
    """The registry tarball of ``name@version`` (scoped names too)."""
    root = npm_base(base)
    quoted = urllib.parse.quote(name, safe="@")  # "@scope/pkg" -> "@scope%2Fpkg"
    index_url = f"{root}/{quoted}/{urllib.parse.quote(version, safe='')}"
    try:
        document: object = fetch_json(index_url)
    except NotFound:
        index_url = f"{root}/{quoted}"
        document = _listed_version(
            index_url, "versions", version,
            no_project=f"the npm registry has no package '{name}'",
            no_version=f"the npm registry has no version {name}@{version}")
    dist = document.get("dist") if isinstance(document, dict) else None
    tarball = dist.get("tarball") if isinstance(dist, dict) else None
    if not isinstance(tarball, str) or not tarball:
        raise StateAError(
            f"the npm registry gives no dist.tarball for {name}@{version} ({index_url})"
        )
    url = urllib.parse.urljoin(index_url, tarball)
    filename = urllib.parse.unquote(urllib.parse.urlsplit(url).path.rsplit("/", 1)[-1])
    return ResolvedArchive(url, filename or f"{name}-{version}.tgz", None, index_url)
