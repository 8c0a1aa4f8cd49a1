"""Reading a Dockerfile the way the builder does: declared args, FROM references, the image
map's substitution (no engine needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from srb_tui.runner.dockerfile import read_dockerfile, rewrite_refs
from srb_tui.service.grading.image_plan import ImageMapError, load_image_map

LANG03_SHAPE = """\
# comment
ARG INFRA_IMAGE=swerefactor/infra:1
FROM ${INFRA_IMAGE} AS infra

FROM golang:1.25.12-bookworm@sha256:ea34 AS toolchain
ARG DEBIAN_FRONTEND=noninteractive
RUN echo \\
    continued
FROM toolchain AS baseline
COPY --from=infra /opt/swerefactor /opt/swerefactor
COPY --from=python@sha256:b189 /usr/local/bin/python3 /usr/bin/
"""


def test_declared_args_and_references() -> None:
    facts = read_dockerfile(LANG03_SHAPE)
    assert facts.args == {"INFRA_IMAGE": "swerefactor/infra:1",
                          "DEBIAN_FRONTEND": "noninteractive"}
    assert facts.stages == {"infra", "toolchain", "baseline"}
    assert facts.refs == ("swerefactor/infra:1", "golang:1.25.12-bookworm@sha256:ea34",
                          "python@sha256:b189")
    given = read_dockerfile(LANG03_SHAPE, {"INFRA_IMAGE": "local/infra:2"})
    assert given.refs[0] == "local/infra:2"


def test_the_image_map_rewrites_a_copy() -> None:
    text, done = rewrite_refs(LANG03_SHAPE, {
        "golang:1.25.12-bookworm@sha256:ea34": "local/go:1.25",
        "python@sha256:b189": "srb/base:bookworm",
        "swerefactor/infra:1": "local/infra:9",
    })
    assert done == [("swerefactor/infra:1", "local/infra:9"),
                    ("golang:1.25.12-bookworm@sha256:ea34", "local/go:1.25"),
                    ("python@sha256:b189", "srb/base:bookworm")]
    assert "FROM local/infra:9 AS infra" in text
    assert "FROM local/go:1.25 AS toolchain" in text
    assert "COPY --from=srb/base:bookworm /usr/local/bin/python3" in text
    assert "COPY --from=infra /opt/swerefactor" in text, "a stage name is not an image"
    # A build argument given explicitly wins over the default, so the map is not applied.
    _, none = rewrite_refs(LANG03_SHAPE, {"swerefactor/infra:1": "x/y:1"},
                           {"INFRA_IMAGE": "srb-built/infra:1"})
    assert none == []


def test_image_map_errors_name_file_and_key(tmp_path: Path) -> None:
    assert load_image_map(tmp_path) == {}
    (tmp_path / "config.toml").write_text('[images]\n"python@sha256:b189" = 3\n')
    with pytest.raises(ImageMapError) as caught:
        load_image_map(tmp_path)
    assert str(caught.value) == (f'{tmp_path / "config.toml"}: images."python@sha256:b189" '
                                 "must be a local image reference, not 3")
    (tmp_path / "config.toml").write_text('[images]\n"a/b:1" = "c/d:2"\n')
    assert load_image_map(tmp_path) == {"a/b:1": "c/d:2"}
