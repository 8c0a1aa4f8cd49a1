"""``[backend]`` / ``[engines.*]`` in state/config.toml: the local default and its mistakes."""

from __future__ import annotations

from pathlib import Path

import pytest

from srb_tui.runner.backend_config import BackendConfigError, load_backend


def test_no_file_is_the_local_backend(tmp_path: Path) -> None:
    config = load_backend(tmp_path)
    assert config.local and [e.name for e in config.engines] == ["local"]
    assert config.engines[0].url is None  # DOCKER_HOST or the default socket, as before


def test_a_pool_of_engines(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        '[gateway.anthropic]\nkey_env = "K"\n\n[backend]\nkind = "engines"\n'
        'registry = "10.0.0.9:5000"\n\n[engines.b]\nurl = "ssh://srb@b"\n\n'
        '[engines.a]\nurl = "tcp://10.0.0.2:2376"\ncpus = 4\nmemory_mb = 8192\n'
        'tls_ca = "ca.pem"\ntls_cert = "c.pem"\ntls_key = "k.pem"\n')
    config = load_backend(tmp_path)
    assert config.kind == "engines" and config.registry == "10.0.0.9:5000"
    a, b = config.engines
    assert (a.name, a.url, a.cpus, a.memory_mb) == ("a", "tcp://10.0.0.2:2376", 4.0, 8192)
    assert a.tls is not None and a.tls.key == "k.pem"
    assert (b.name, b.url, b.cpus, b.tls) == ("b", "ssh://srb@b", None, None)


@pytest.mark.parametrize(("text", "says"), [
    ('[backend]\nkind = "k8s"\n', "kind 'k8s'"),
    ('[backend]\nkind = "engines"\n', "at least one [engines.NAME]"),
    ('[backend]\nkind = "engines"\n[engines.a]\nurl = "ftp://x"\n', "scheme 'ftp'"),
    ('[backend]\nkind = "engines"\n[engines.a]\nurl = "tcp://x:1"\ncpus = 0\n', "cpus"),
    ('[backend]\nkind = "engines"\n[engines.a]\nurl = "tcp://x:1"\ntls_ca = "c"\n', "TLS"),
    ('[backend]\nkind = "engines"\n[engines.a]\nurl = "tcp://x:1"\nport = 1\n', "'port'"),
    ('[backend]\nkind = "swarm"\n', "manager"),
])
def test_mistakes_name_the_file_and_key(tmp_path: Path, text: str, says: str) -> None:
    (tmp_path / "config.toml").write_text(text)
    with pytest.raises(BackendConfigError) as caught:
        load_backend(tmp_path)
    assert says in str(caught.value) and "config.toml" in str(caught.value)
