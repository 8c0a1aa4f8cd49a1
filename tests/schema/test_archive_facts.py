"""schema/archive_facts.py: an archive is read once per version of the file, and a new
version — rewritten in place, replaced, even with the same size — is read again."""

from __future__ import annotations

import hashlib
import io
import os
import tarfile
from pathlib import Path

from srb_tui.schema import archive_facts


def _archive(path: Path, names: list[str]) -> None:
    with tarfile.open(path, "w:gz") as tar:
        for name in names:
            data = name.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_read_once_per_version_and_again_after_any_change(tmp_path: Path,
                                                          monkeypatch) -> None:  # type: ignore[no-untyped-def]
    archive_facts.forget()
    archive = tmp_path / "original.tar.gz"
    _archive(archive, ["a.py", "src/b.py"])
    opened: list[str] = []
    real_open = tarfile.open

    def counting_open(*args, **kwargs):  # type: ignore[no-untyped-def]
        if args[1:2] == ("r:*",):  # archive_facts reading (not this test writing)
            opened.append(str(args[0]))
        return real_open(*args, **kwargs)

    monkeypatch.setattr(tarfile, "open", counting_open)
    assert archive_facts.archive_files(archive) == ["a.py", "src/b.py"]
    assert archive_facts.archive_files(archive) == ["a.py", "src/b.py"]
    assert len(opened) == 1  # the second answer came from memory
    digest = archive_facts.file_sha256(archive)
    assert digest == hashlib.sha256(archive.read_bytes()).hexdigest()

    stat = archive.stat()
    _archive(archive, ["a.py", "src/c.py"])  # same length of names: same size likely
    os.utime(archive, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # even with mtime put back
    assert archive_facts.archive_files(archive) == ["a.py", "src/c.py"]
    assert len(opened) == 2
    assert archive_facts.file_sha256(archive) == hashlib.sha256(archive.read_bytes()).hexdigest()
    assert archive_facts.file_sha256(archive) != digest

    replacement = tmp_path / "other.tar.gz"
    _archive(replacement, ["z.py"])
    replacement.replace(archive)  # a new file in its place
    assert archive_facts.archive_files(archive) == ["z.py"]


def test_the_memory_is_bounded(tmp_path: Path) -> None:
    archive_facts.forget()
    for i in range(archive_facts.KEEP + 5):
        path = tmp_path / f"a{i}.tar.gz"
        _archive(path, [f"f{i}.py"])
        archive_facts.archive_files(path)
    assert len(archive_facts._listings) == archive_facts.KEEP


def test_kept_on_disk_for_the_next_process_and_only_for_that_version(
        tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    archive = tmp_path / "original.tar.gz"
    _archive(archive, ["a.py"])
    (tmp_path / "cache").mkdir()
    facts = tmp_path / "cache" / "archive-facts"
    archive_facts.forget()
    archive_facts.keep_on_disk(facts)
    try:
        digest = archive_facts.file_sha256(archive)
        assert archive_facts.archive_files(archive) == ["a.py"]
        assert len(list(facts.glob("*.json"))) == 1  # both facts of one version, one file

        archive_facts.forget()  # what a new process starts with

        def no_reading(*_args, **_kwargs):  # type: ignore[no-untyped-def]
            raise AssertionError("the archive was read again")

        real_path_open = Path.open

        def open_but_not_the_archive(self: Path, *args, **kwargs):  # type: ignore[no-untyped-def]
            if self == archive:
                raise AssertionError("the archive was read again")
            return real_path_open(self, *args, **kwargs)

        monkeypatch.setattr(tarfile, "open", no_reading)
        monkeypatch.setattr(Path, "open", open_but_not_the_archive)
        assert archive_facts.archive_files(archive) == ["a.py"]
        assert archive_facts.file_sha256(archive) == digest
        monkeypatch.undo()

        _archive(archive, ["b.py"])  # a new version: the kept facts do not apply
        archive_facts.forget()
        assert archive_facts.archive_files(archive) == ["b.py"]

        archive_facts.keep_on_disk(tmp_path / "gone" / "archive-facts")  # no parent
        archive_facts.forget()
        archive_facts.archive_files(archive)
        assert not (tmp_path / "gone").exists()  # nothing created outside a cache dir
    finally:
        archive_facts.keep_on_disk(None)
        archive_facts.forget()
