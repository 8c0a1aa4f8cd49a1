"""Table 3i's intervals, ``--compare`` and the pooling rule: against scipy's own answers,
and through the real CLI over a synthetic store."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from srb_tui.cli import main
from srb_tui.commands import exit_codes as codes
from srb_tui.reports import build_report
from srb_tui.reports.records import ReportRun
from srb_tui.reports.stats import RESAMPLES, SEED, interval
from srb_tui.reports.uncertainty import compare_report
from srb_tui.store import Store
from srb_tui.store.provenance import PROVENANCE

from .synth import Spec, add_run

SCORES = [100.0, 40.0, 0.0, 70.0, 100.0, 0.0, 40.0, 90.0, 10.0, 60.0]


def _run(task: str, config: str, score: float, n: int = 0) -> ReportRun:
    return ReportRun(run_id=f"{config}-{task}-{n}", task=task, config=config, score=score,
                     audit_gate="pass", complete=score > 0, checks_passed=int(score // 10),
                     checks_total=10)


def test_interval_of_a_seeded_fixture_is_scipys() -> None:
    runs = [_run(f"t{i}", "X", s) for i, s in enumerate(SCORES)]
    row = build_report(runs).table("table3i").rows[0]
    reference = stats.bootstrap((np.array(SCORES),), np.mean, n_resamples=RESAMPLES,
                                method="percentile", confidence_level=0.95,
                                rng=np.random.default_rng(SEED)).confidence_interval
    assert row[:3] == ["X", 10, 10]
    assert row[3] == pytest.approx(np.mean(SCORES))
    assert row[4] == pytest.approx(reference.low, abs=1e-6)
    assert row[5] == pytest.approx(reference.high, abs=1e-6)
    assert row[4] < row[3] < row[5]
    table = build_report(runs).table("table3i")
    assert any("10,000 resamples" in n for n in table.notes)


def test_repeats_resample_in_two_stages() -> None:
    """Identical repeats add no spread: the two-stage interval is then the task-level one
    (up to resampling noise); spread repeats widen it."""
    same = {f"t{i}": [s, s, s] for i, s in enumerate(SCORES)}
    found = interval(same)
    reference = stats.bootstrap((np.array(SCORES),), np.mean, n_resamples=RESAMPLES,
                                method="percentile", rng=np.random.default_rng(1)
                                ).confidence_interval
    assert found is not None and found.runs == 30 and found.tasks == 10
    assert found.low == pytest.approx(reference.low, abs=2.5)
    assert found.high == pytest.approx(reference.high, abs=2.5)
    spread = {f"t{i}": [s, 100.0 - s, s] for i, s in enumerate(SCORES)}
    wide = interval(spread)
    assert wide is not None and wide.low is not None and wide.high is not None
    assert interval(spread) == wide  # seeded: the same every time
    assert interval({"t1": [50.0]}) is not None and interval({"t1": [50.0]}).low is None  # type: ignore[union-attr]


def test_compare_gives_the_sign_and_a_small_p_value() -> None:
    runs = [_run(f"t{i}", "strong", min(100.0, s + 10 + i)) for i, s in enumerate(SCORES)]
    runs += [_run(f"t{i}", "weak", s) for i, s in enumerate(SCORES)]
    runs.append(_run("only-strong", "strong", 100.0))
    report = compare_report(runs, "strong", "weak")
    summary = report.table("compare")
    assert summary.cell("strong", "tasks") == 10  # the shared tasks only
    diff, low, p = (summary.cell("strong", k) for k in ("diff", "low", "p"))
    assert isinstance(diff, float) and isinstance(low, float) and isinstance(p, float)
    assert diff > 0 and low > 0
    assert 0 < p < 0.01
    assert summary.cell("strong", "wins_a") == 8 and summary.cell("strong", "ties") == 2
    assert "strong beat weak" in " ".join(summary.notes)
    winners = report.table("compare_tasks").column("winner")
    assert winners.count("A") == 8 and winners.count("tie") == 2
    reverse = compare_report(runs, "weak", "strong").table("compare")
    assert reverse.cell("weak", "diff") == pytest.approx(-diff)
    assert reverse.cell("weak", "p") == pytest.approx(p)
    same = compare_report(runs, "weak", "weak").table("compare")
    assert same.cell("weak", "diff") == 0 and same.cell("weak", "p") == 1.0
    assert "No clear difference" in " ".join(same.notes)


async def _mixed_store(state: Path) -> list[str]:
    async with await Store.open(state / "srb.sqlite3") as store:
        ids = [await add_run(store, Spec(f"t{i}", agent, modules=(("m1", p, 10),)))
               for i in range(4) for agent, p in (("replay:a", 10), ("replay:b", 4))]
        for n, rid in enumerate(ids):
            await store.runs.merge_extra(rid, {PROVENANCE: {
                "grader_fingerprint": "aaaaaaaaaaaa" if n < 6 else "bbbbbbbbbbbb",
                "task_digest": "sha256:" + ("1" * 64 if n != 7 else "2" * 64),
            }})
        return ids


def test_report_refuses_a_mixed_pool_unless_asked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    asyncio.run(_mixed_store(tmp_path))
    base = ["--tasks", str(tmp_path / "none"), "--state", str(tmp_path), "report"]
    assert main([*base, "--json"]) == codes.FAILED
    err = capsys.readouterr().err
    assert "2 grader builds" in err and "aaaaaaaaaaaa × 6" in err and "bbbbbbbbbbbb × 2" in err
    assert "task t3 was loaded as 2 different directories" in err and "--mixed" in err
    assert main([*base, "--json", "--mixed"]) == codes.OK
    doc = json.loads(capsys.readouterr().out)
    assert any("aaaaaaaaaaaa × 6, bbbbbbbbbbbb × 2" in n for n in doc["notes"])
    # a selection of one build pools without --mixed
    assert main([*base, "--json", "task:t0"]) == codes.OK
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert notes == ["Provenance: grader fingerprint aaaaaaaaaaaa × 2; task digest (sha256 of "
                     "the task directory as loaded) t0 111111111111 × 2. Each run's image "
                     "digests by stage: srb runs show RUN --json (provenance), or the "
                     "image_digests column of srb export's runs.parquet."]


def test_cli_compare(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    async def store() -> None:
        async with await Store.open(tmp_path / "srb.sqlite3") as s:
            for i in range(6):
                await add_run(s, Spec(f"t{i}", "replay:a"))
                await add_run(s, Spec(f"t{i}", "replay:b", audit="fail"))

    asyncio.run(store())
    base = ["--tasks", str(tmp_path / "none"), "--state", str(tmp_path), "report"]
    assert main([*base, "--compare", "replay:a", "replay:b", "--json"]) == codes.OK
    doc = json.loads(capsys.readouterr().out)
    row = doc["tables"][0]["rows"][0]
    assert row["tasks"] == 6 and row["diff"] == 100.0 and row["wins_a"] == 6
    assert row["p"] == pytest.approx(0.03125)  # exact Wilcoxon, n = 6, all one sign
    assert main([*base, "--compare", "replay:a", "nope"]) == codes.NOT_FOUND
    assert "no runs of 'nope'" in capsys.readouterr().err
    assert main([*base, "--compare", "replay:a", "replay:b", "--format", "md",
                 "--metric", "accepted"]) == codes.OK
    md = capsys.readouterr().out
    assert "Compare · Accepted %: replay:a − replay:b" in md and "| t0 |" in md
    figures = tmp_path / "figs"
    assert main([*base, "--compare", "replay:a", "replay:b", "--figures", str(figures)]
                ) == codes.USAGE
    assert "--compare has none" in capsys.readouterr().err and not figures.exists()


def test_three_tasks_of_one_sign_are_not_enough_for_the_test() -> None:
    """The demo campaign's case: every task won by 60 points, but n = 3 gives p = 0.25."""
    runs = [_run(f"t{i}", "ref", 100.0) for i in range(3)]
    runs += [_run(f"t{i}", "subtle", 40.0) for i in range(3)]
    summary = compare_report(runs, "ref", "subtle").table("compare")
    assert summary.cell("ref", "diff") == 60.0 and summary.cell("ref", "low") == 60.0
    assert summary.cell("ref", "p") == 0.25
    assert "interval excludes 0 but p = 0.25" in summary.notes[-1]


async def _two_configs(state: Path) -> None:
    async with await Store.open(state / "srb.sqlite3") as s:
        for i in range(5):
            await add_run(s, Spec(f"t{i}", "replay:a", modules=(("m1", 10 - i, 10),)))
            await add_run(s, Spec(f"t{i}", "replay:b", audit="fail" if i % 2 else "pass",
                                  modules=(("m1", 4 + i, 10),)))


@pytest.mark.parametrize("fmt", ["md", "csv", "json", "latex", "html"])
def test_every_format_carries_the_intervals_and_their_method(
        fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Table 3i's bounds and the note naming the method and the resample count, and the
    compare's interval, p-value and method, in each of ``srb report``'s formats."""
    asyncio.run(_two_configs(tmp_path))
    base = ["--tasks", str(tmp_path / "none"), "--state", str(tmp_path), "report",
            "--format", fmt]
    assert main(base) == codes.OK
    text = capsys.readouterr().out
    assert main(["--tasks", str(tmp_path / "none"), "--state", str(tmp_path), "report",
                 "--json", "--table", "table3i"]) == codes.OK
    table = json.loads(capsys.readouterr().out)["tables"][0]
    rows = {r["config"]: r for r in table["rows"]}
    assert set(rows) == {"replay:a", "replay:b"}
    low, high = rows["replay:b"]["behavioural_low"], rows["replay:b"]["behavioural_high"]
    assert isinstance(low, float) and isinstance(high, float) and low < high
    resamples = "10,000 resamples"
    latex_title = "Table 3i \\textperiodcentered{} scores with 95\\% intervals"
    assert (latex_title if fmt == "latex" else "scores with 95% intervals") in text
    assert "percentile bootstrap" in text and resamples in text, fmt
    # the bounds themselves, as each format writes numbers
    shown = (f"{low:.1f}", f"{high:.1f}") if fmt in ("md", "latex", "html") \
        else (repr(low), repr(high))
    assert all(v in text for v in shown), (fmt, shown)

    assert main([*base, "--compare", "replay:a", "replay:b"]) == codes.OK
    text = capsys.readouterr().out
    assert "scipy.stats.wilcoxon" in text and resamples in text, fmt
    assert "p-value" in text and ("95% low" in text or "95\\% low" in text), fmt


def _two_stage_reference(groups: list[list[float]], resamples: int = RESAMPLES
                         ) -> tuple[float, float]:
    """The two-stage resample as first written (one batch of 500 at a time, every array
    built per call): the numbers the kept draws must reproduce exactly."""
    rng = np.random.default_rng(SEED)
    count, sizes = len(groups), np.array([len(g) for g in groups])
    widest = int(sizes.max())
    table = np.zeros((count, widest))
    for i, g in enumerate(groups):
        table[i, :len(g)] = g
    means, done = [], 0
    while done < resamples:
        batch = min(500, resamples - done)
        tasks = rng.integers(0, count, size=(batch, count))
        n = sizes[tasks]
        picks = np.floor(rng.random((batch, count, widest)) * n[..., None]).astype(int)
        used = np.arange(widest)[None, None, :] < n[..., None]
        drawn = table[tasks[..., None], picks]
        means.append((drawn * used).sum(axis=(1, 2)) / used.sum(axis=(1, 2)))
        done += batch
    found = np.concatenate(means)
    return float(np.quantile(found, 0.025)), float(np.quantile(found, 0.975))


def test_two_stage_intervals_are_the_reference_numbers_exactly() -> None:
    """Kept draws (one per shape of tasks), kept results and one gather a call change no
    digit: every shape and value kind, first call and again, equals the reference."""
    from random import Random

    rnd = Random(7)
    for case in range(40):
        groups = [[rnd.choice([0.0, 100.0, rnd.uniform(0, 100), round(rnd.uniform(0, 100), 1)])
                   for _ in range(rnd.choice([1, 2, 2, 3, 5]))]
                  for _ in range(rnd.randint(2, 25))]
        if all(len(g) == 1 for g in groups):
            groups[0].append(50.0)
        want = _two_stage_reference(groups, resamples=1000 + 500 * (case % 3) + case)
        by = {f"t{i:02d}": g for i, g in enumerate(groups)}
        for _again in range(2):
            found = interval(by, resamples=1000 + 500 * (case % 3) + case)
            assert found is not None
            assert (found.low, found.high) == (round(want[0], 6), round(want[1], 6)), case
    same_shape = {f"t{i}": [s, 100.0 - s] for i, s in enumerate(SCORES)}
    low, high = _two_stage_reference(list(same_shape.values()))
    found = interval(same_shape)
    assert found is not None and (found.low, found.high) == (round(low, 6), round(high, 6))


def test_what_the_intervals_keep_is_bounded() -> None:
    from srb_tui.reports.stats import _Kept

    kept = _Kept(100)
    for k in range(10):
        kept.put(k, 30, f"v{k}")
        assert kept.total <= 100 and kept.get(k) == f"v{k}"
    assert sorted(kept.held) == [7, 8, 9] and kept.total == 90  # the oldest went first
    kept.put("huge", 101, "never")
    assert kept.get("huge") is None and kept.total == 90
