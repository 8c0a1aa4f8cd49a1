"""demo02's files on the host, without Docker: State A archive, manifests, stage folders,
the behavioural data, and what each submission is supposed to be."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path
from typing import Any

from ..conftest import DEMO02_TASK

TASK_DIR = DEMO02_TASK
SUBMISSIONS = TASK_DIR / "submissions"
GATES = ["no-old-framework", "dependencies-updated", "aiohttp-serves-routes", "no-proxy"]
MODULES = ("routing", "negotiation", "queries")


def _toml(rel: str) -> dict[str, Any]:
    with open(TASK_DIR / rel, "rb") as handle:
        return tomllib.load(handle)


def _files(name: str) -> dict[str, Path]:
    root = SUBMISSIONS / name
    return {p.relative_to(root).as_posix(): p for p in root.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}


def test_archive_matches_its_digest_and_the_untouched_tree() -> None:
    data = (TASK_DIR / "environment" / "original.tar.gz").read_bytes()
    digest, name = (TASK_DIR / "environment" / "original.sha256").read_text().split()
    assert name == "original.tar.gz" and hashlib.sha256(data).hexdigest() == digest
    files = _files("untouched")
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        members = tar.getmembers()
        assert [m.name for m in members] == sorted(m.name for m in members)
        assert all(m.mtime == 0 and m.uid == 0 and m.gid == 0 for m in members)
        packed = {m.name: m for m in members if m.isfile()}
        assert sorted(packed) == sorted(files)
        for rel, member in packed.items():
            extracted = tar.extractfile(member)
            assert extracted is not None and extracted.read() == files[rel].read_bytes(), rel


def test_make_archive_is_deterministic(tmp_path: Path) -> None:
    out = tmp_path / "original.tar.gz"
    subprocess.run([sys.executable, str(TASK_DIR / "make_archive.py"), "--out", str(out)],
                   check=True, capture_output=True)
    assert out.read_bytes() == (TASK_DIR / "environment" / "original.tar.gz").read_bytes()


def test_state_a_is_an_http_server_service_of_the_promised_size() -> None:
    files = _files("untouched")
    lines = sum(len(p.read_text().splitlines()) for rel, p in files.items()
                if rel.startswith("shelf/"))
    assert 300 <= lines <= 800
    assert "from http.server import" in files["shelf/server.py"].read_text()
    assert files["bin/shelf"].read_text().startswith("#!/usr/bin/env python3\n")


def test_evaluation_gates_and_probe() -> None:
    ev = _toml("tests/evaluation.toml")
    audit = ev["stages"]["audit"]
    assert [g["id"] for g in audit["gate"]] == GATES
    assert all(g["required"] for g in audit["gate"]) and audit["samples"] == 3
    probe = _toml("tests/verification/probe.toml")
    meta = probe["metadata"]
    assert meta["fuzz_domain"] == "http" and "{port}" in meta["fuzz_server"]
    assert len({a["id"] for a in probe["adversary"]}) == 6
    assert all(a["driver"] == "fuzz" for a in probe["adversary"])
    seeds = json.loads((TASK_DIR / "tests" / "verification" / meta["fuzz_seeds"]).read_text())
    assert len(seeds["requests"]) >= 10 and seeds["vocabulary"]["methods"]
    task = _toml("task.toml")
    assert task["verifier"]["timeout_sec"] >= sum(
        s["timeout_sec"] for s in ev["stages"].values())


def test_images_take_aiohttp_from_apt_and_the_base_as_an_argument() -> None:
    tests = TASK_DIR / "tests"
    for path in [tests / "behavioural" / "Dockerfile", tests / "verification" / "Dockerfile",
                 TASK_DIR / "environment" / "Dockerfile"]:
        text = path.read_text()
        lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
        assert lines[:2] == ["ARG BASE_IMAGE=srb/base:bookworm", "FROM ${BASE_IMAGE}"], path
        assert "python3-aiohttp" in text and "pip" not in text, path


def test_cases_line_up_with_state_a_answers() -> None:
    data = TASK_DIR / "tests" / "behavioural" / "data"
    total = 0
    for module in MODULES:
        cases = json.loads((data / "cases" / f"{module}.json").read_text())["cases"]
        expected = json.loads((data / "expected" / f"{module}.json").read_text())["cases"]
        assert [c["id"] for c in cases] == list(dict.fromkeys(c["id"] for c in cases))
        assert set(expected) == {c["id"] for c in cases}
        assert {v["status"] for v in expected.values()} >= {200, 400}
        total += len(cases)
    assert total == 154


def test_no_fixed_case_spells_a_number_the_way_subtle_differs() -> None:
    """subtle's int() accepts ' 5', '+5', '1_0' and non-ASCII digits; the fixed suite must
    never send such a value (else Stage II would catch it and Stage III would not be needed)."""
    from urllib.parse import parse_qsl

    numeric = {"limit", "offset", "year"}
    for module in MODULES:
        cases = json.loads((TASK_DIR / "tests/behavioural/data/cases" / f"{module}.json")
                           .read_text())["cases"]
        for case in cases:
            query = case["target"].partition("?")[2]
            for name, value in parse_qsl(query, keep_blank_values=True):
                if name in numeric and value:
                    try:
                        int(value)
                    except ValueError:
                        continue
                    assert value.lstrip("-").isascii() and value.lstrip("-").isdigit(), case


def test_subtle_differs_from_reference_only_in_integer_parsing() -> None:
    ref, sub = _files("reference"), _files("subtle")
    assert sorted(ref) == sorted(sub)
    changed = [rel for rel in ref if ref[rel].read_bytes() != sub[rel].read_bytes()]
    assert changed == ["shelf/params.py"]
    assert "int(text)" in sub["shelf/params.py"].read_text()


def test_reference_has_no_old_framework_and_declares_aiohttp() -> None:
    files = _files("reference")
    assert not any("http.server" in p.read_text() for rel, p in files.items()
                   if rel.endswith(".py") or rel.startswith("bin/"))
    assert "aiohttp" in files["pyproject.toml"].read_text()


def test_srb_schema_loader_accepts_the_task() -> None:
    from srb_tui.schema.loader import load_task

    result = load_task(TASK_DIR)
    assert result.ok, [str(p) for p in result.problems]
    assert not result.warnings, [str(w) for w in result.warnings]
