"""Pinned agent clients: which version a run uses, installing it into srb's cache, checking it.

A client is installed once per version on the host, under
``~/.cache/srb/clients/<name>-<version>`` (``SRB_CLIENT_CACHE`` overrides the root), and
mounted read-only into the agent container at ``/opt/srb/clients/<name>-<version>``; the
task's image is never changed. Installs go to a temporary directory beside the target and
are renamed into place only once ``--version`` printed the expected version, so a cache
entry is either complete or absent. The npm clients are installed with their optional
dependencies and install scripts (both carry their native binary that way).

The version comes from the task's ``[agent].harness`` when it names the client
(``"codex-cli 0.146.0"``), else from the operator's override, else srb's pin.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from srb_tui.agents.errors import ClientError
from srb_tui.agents.kinds import CLIENTS, ClientKind

MOUNT_ROOT = "/opt/srb/clients"


@dataclass(frozen=True)
class ClientPin:
    """The client version a run uses, and where the pin came from (task, override, srb)."""

    name: str
    version: str
    source: str  # "task" | "override" | "srb"

    @property
    def dirname(self) -> str:
        return f"{self.name}-{self.version}"

    @property
    def mount(self) -> str:
        return f"{MOUNT_ROOT}/{self.dirname}"

    @property
    def kind(self) -> ClientKind:
        return CLIENTS[self.name]

    @property
    def binary_in_container(self) -> str:
        return f"{self.mount}/{self.kind.binary}"

    def version_matches(self, output: str) -> bool:
        pattern = self.kind.version_pattern.format(v=re.escape(self.version))
        return re.search(pattern, output.strip(), re.MULTILINE) is not None


def cache_root(environ: dict[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    if env.get("SRB_CLIENT_CACHE"):
        return Path(env["SRB_CLIENT_CACHE"])
    return Path.home() / ".cache" / "srb" / "clients"


_VERSION = re.compile(r"^[0-9][0-9A-Za-z.+-]*$")


def resolve_pin(client: str, harness: str | None, override: str | None = None) -> ClientPin:
    """The version a run of ``client`` uses (see the module docstring for the order)."""
    kind = CLIENTS.get(client)
    if kind is None:
        raise ClientError(f"unknown client {client!r} (known: {', '.join(CLIENTS)})")
    if override:
        if not _VERSION.match(override):
            raise ClientError(f"client version {override!r} is not a version number")
        return ClientPin(client, override, "override")
    if harness:
        words = harness.strip().split()
        if len(words) == 2 and words[0] in kind.harness_names and _VERSION.match(words[1]):
            return ClientPin(client, words[1], "task")
    return ClientPin(client, kind.default_version, "srb")


def install_dir(pin: ClientPin, root: Path | None = None) -> Path:
    return (root or cache_root()) / pin.dirname


def _run(argv: list[str], *, timeout: float, env: dict[str, str] | None = None) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              env=env, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ClientError(f"{argv[0]}: {exc}") from exc
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-8:]
        raise ClientError(f"{' '.join(argv[:3])}… exited {done.returncode}: "
                          + " | ".join(tail))
    return done.stdout


def _sha256_tree(root: Path) -> str:
    """A digest over the package's own files (names and bytes), to record with a run."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        with path.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def _host_version(pin: ClientPin, target: Path) -> str:
    binary = target / pin.kind.binary
    env = dict(os.environ)
    if pin.kind.registry == "pypi":
        env["PYTHONPATH"] = str(target / "lib")
        return _run([sys_python(), "-c", "import minisweagent; print(minisweagent.__version__)"],
                    timeout=120, env=env)
    return _run([str(binary), "--version"], timeout=60, env=env)


def sys_python() -> str:
    return shutil.which("python3") or "python3"


def _install_into(pin: ClientPin, tmp: Path) -> None:
    kind = pin.kind
    if kind.registry == "npm":
        npm = shutil.which("npm")
        if npm is None:
            raise ClientError("npm is not installed on this host; it is needed to install "
                              f"{kind.package}@{pin.version}")
        _run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(tmp),
              f"{kind.package}@{pin.version}"], timeout=1800)
        return
    _run([sys_python(), "-m", "pip", "install", "--quiet", "--no-warn-script-location",
          "--target", str(tmp / "lib"), f"{kind.package}=={pin.version}"], timeout=1800)
    (tmp / "bin").mkdir(exist_ok=True)
    launcher = tmp / "bin" / "mini"
    launcher.write_text(
        "#!/bin/sh\n"
        'here="$(dirname "$0")/.."\n'
        'PYTHONPATH="$here/lib${PYTHONPATH:+:$PYTHONPATH}" exec python3 -m minisweagent.run.mini '
        '"$@"\n')
    launcher.chmod(0o755)


@dataclass(frozen=True)
class InstalledClient:
    """A client installed in srb's client cache, checked by digest and its version output."""

    pin: ClientPin
    path: Path
    sha256: str
    version_output: str


def _meta_path(target: Path) -> Path:
    return target / ".srb-client.json"


def installed(pin: ClientPin, root: Path | None = None) -> InstalledClient | None:
    """The cache entry of ``pin`` when it is complete (its record written at install)."""
    target = install_dir(pin, root)
    try:
        meta = json.loads(_meta_path(target).read_text())
    except (OSError, ValueError):
        return None
    return InstalledClient(pin, target, str(meta.get("sha256", "")),
                           str(meta.get("version_output", "")))


def ensure_installed(pin: ClientPin, root: Path | None = None) -> InstalledClient:
    """Install ``pin`` into the cache unless it is there; verify its ``--version``.

    Blocking (run it in a thread). Concurrent installers of one version race harmlessly:
    each installs into its own temporary directory and the first rename wins.
    """
    have = installed(pin, root)
    if have is not None:
        return have
    base = root or cache_root()
    base.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{pin.dirname}-", dir=base))
    try:
        _install_into(pin, tmp)
        output = _host_version(pin, tmp).strip()
        if not pin.version_matches(output):
            raise ClientError(f"{pin.name}: installed {pin.kind.package}@{pin.version} but "
                              f"--version printed {output!r}")
        sha = _sha256_tree(tmp / ("node_modules" if pin.kind.registry == "npm" else "lib"))
        _meta_path(tmp).write_text(json.dumps({
            "name": pin.name, "version": pin.version, "package": pin.kind.package,
            "sha256": sha, "version_output": output}))
        for path in [tmp, *tmp.rglob("*")]:
            if path.is_dir() and not path.is_symlink():
                path.chmod(path.stat().st_mode | 0o755)
        target = install_dir(pin, root)
        try:
            tmp.rename(target)
        except OSError:
            if installed(pin, root) is None:
                raise
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    result = installed(pin, root)
    if result is None:
        raise ClientError(f"{pin.name} {pin.version}: install finished but no cache record")
    return result


def cached_clients(root: Path | None = None) -> list[InstalledClient]:
    """Every complete cache entry, for ``srb doctor``."""
    base = root or cache_root()
    out: list[InstalledClient] = []
    if not base.is_dir():
        return out
    for entry in sorted(base.iterdir()):
        if entry.name.startswith(".") or not entry.is_dir():
            continue
        try:
            meta = json.loads(_meta_path(entry).read_text())
        except (OSError, ValueError):
            continue
        name, version = str(meta.get("name")), str(meta.get("version"))
        if name in CLIENTS:
            out.append(InstalledClient(ClientPin(name, version, "cache"), entry,
                                       str(meta.get("sha256", "")),
                                       str(meta.get("version_output", ""))))
    return out
