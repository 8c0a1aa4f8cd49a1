"""Intervals and paired tests over per-run values, with numpy and scipy (the ``stats`` extra).

* :func:`interval` — a 95% percentile bootstrap of the mean of per-run values grouped by
  task. With one run per task it is :func:`scipy.stats.bootstrap` over tasks; where tasks
  have repeats it resamples in two stages (tasks with replacement, then each drawn task's
  runs with replacement), the mean over every drawn run being the statistic, and the
  percentile interval is taken with :func:`numpy.quantile`.
* :func:`paired` — the paired difference of two groups over the tasks both ran: per-task
  mean difference, its bootstrap interval (scipy, over tasks), and the Wilcoxon signed-rank
  test's two-sided p-value (:func:`scipy.stats.wilcoxon`, zero differences dropped).

Every resampling is seeded (``SEED``), so a report is the same each time it is built.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

RESAMPLES = 10_000
SEED = 20_260_101
LEVEL = 0.95
_BATCH = 500  # two-stage resamples drawn at once (bounds the memory a large report takes)
_COUNTS = "counts"  # a kept draw: (resamples x cells) counts of each cell drawn


class StatsUnavailable(ImportError):
    """numpy/scipy are not installed (the ``stats`` extra)."""


def _libs() -> tuple[Any, Any]:
    try:
        import numpy as np
        from scipy import stats  # type: ignore[import-untyped]
    except ImportError as exc:
        raise StatsUnavailable(
            f"intervals need numpy and scipy: pip install -e '.[stats]' ({exc})") from exc
    return np, stats


def method_note(resamples: int = RESAMPLES) -> str:
    return (f"95% intervals: percentile bootstrap of the mean, {resamples:,} resamples "
            "(seeded), over tasks, and over each task's runs where a configuration ran it "
            "more than once (scipy.stats.bootstrap; numpy for the two-stage resample).")


@dataclass(frozen=True)
class Interval:
    """A mean and its interval (``low``/``high`` None when fewer than two tasks)."""

    mean: float
    low: float | None
    high: float | None
    tasks: int
    runs: int


def interval(by_task: Mapping[str, Sequence[float]], *, resamples: int = RESAMPLES,
             seed: int = SEED) -> Interval | None:
    """The mean of every run's value and its 95% bootstrap interval (None: no runs)."""
    groups = tuple(tuple(map(float, v)) for _k, v in sorted(by_task.items()) if v)
    runs = sum(len(g) for g in groups)
    if not groups:
        return None
    mean = sum(sum(g) for g in groups) / runs
    if len(groups) < 2:
        return Interval(round(mean, 6), None, None, len(groups), runs)
    low, high = _bounds(groups, resamples, seed)
    return Interval(round(mean, 6), round(low, 6), round(high, 6), len(groups), runs)


class _Kept:
    """Results kept across calls, oldest out first once they hold more than ``cells``
    (a bound on memory, whatever the size of the runs reported on)."""

    def __init__(self, cells: int) -> None:
        self.cells = cells
        self.held: dict[Any, tuple[int, Any]] = {}
        self.total = 0

    def get(self, key: Any) -> Any:
        found = self.held.get(key)
        return None if found is None else found[1]

    def put(self, key: Any, cells: int, value: Any) -> None:
        if cells > self.cells or key in self.held:
            return
        while self.held and self.total + cells > self.cells:
            self.total -= self.held.pop(next(iter(self.held)))[0]
        self.held[key] = (cells, value)
        self.total += cells


_KEPT_BOUNDS = _Kept(1_000_000)  # values in the keys (about 40 MB at most)
_KEPT_DRAWS = _Kept(2_000_000)  # drawn cells (about 20 MB at most)


def _bounds(groups: tuple[tuple[float, ...], ...], resamples: int, seed: int
            ) -> tuple[float, float]:
    """The percentile interval of ``groups`` (each task's values, in task order). It is a
    pure function of its arguments (the resampling is seeded), so a report built again over
    the same runs (the Reports screen's refresh, a re-open) reuses it."""
    key = (groups, resamples, seed)
    if (kept := _KEPT_BOUNDS.get(key)) is not None:
        return kept  # type: ignore[no-any-return]
    found = _compute_bounds(groups, resamples, seed)
    _KEPT_BOUNDS.put(key, sum(len(g) for g in groups), found)
    return found


def _compute_bounds(groups: tuple[tuple[float, ...], ...], resamples: int, seed: int
                    ) -> tuple[float, float]:
    np, stats = _libs()
    if all(len(g) == 1 for g in groups):
        values = np.array([g[0] for g in groups])
        if np.all(values == values[0]):
            return float(values[0]), float(values[0])
        found = stats.bootstrap((values,), np.mean, n_resamples=resamples,
                                method="percentile", confidence_level=LEVEL,
                                rng=np.random.default_rng(seed))
        return float(found.confidence_interval.low), float(found.confidence_interval.high)
    return _two_stage(np, groups, resamples, seed)


def _two_stage(np: Any, groups: Sequence[Sequence[float]], resamples: int, seed: int
               ) -> tuple[float, float]:
    """Percentile interval of the mean over a two-stage resample (tasks, then runs).

    The draws depend only on the task sizes (not on the values), so they are made once per
    shape (:func:`_draws`) and every table column of that shape only gathers its values."""
    sizes = tuple(len(g) for g in groups)
    widest = max(sizes)
    table = np.zeros((len(groups), widest))
    for i, g in enumerate(groups):
        table[i, :len(g)] = g
    flat = table.ravel()
    means = []
    for index, used, count in _draws(np, sizes, resamples, seed):
        if used is _COUNTS:  # kept draws: one product with how often each cell was drawn
            means.append(index @ flat / count)
            continue
        drawn = flat[index]
        means.append((drawn if used is None else drawn * used).sum(axis=(1, 2)) / count)
    tail = (1 - LEVEL) / 2
    low, high = np.quantile(np.concatenate(means), [tail, 1 - tail])
    return float(low), float(high)


def _draws(np: Any, sizes: tuple[int, ...], resamples: int, seed: int
           ) -> Iterator[tuple[Any, Any, Any]]:
    """Per batch of resamples: where each drawn run sits in the flattened (task × run)
    table, which of the drawn slots are runs (None: all of them) and how many runs each
    resample drew (kept: every batch as one). The random stream is the seeded one,
    consumed in the same order as ever (tasks, then runs within each drawn task, batch
    after batch). A shape too large to keep is drawn again each time, one batch in memory
    at a time."""
    key = (sizes, resamples, seed)
    if (kept := _KEPT_DRAWS.get(key)) is not None:
        yield from kept
        return
    cells = resamples * len(sizes) * max(sizes)
    keep = cells <= _KEPT_DRAWS.cells
    rng = np.random.default_rng(seed)
    count, widest = len(sizes), max(sizes)
    size = np.array(sizes)
    slots = np.arange(widest)[None, None, :]
    out = []
    done = 0
    while done < resamples:
        batch = min(_BATCH, resamples - done)
        tasks = rng.integers(0, count, size=(batch, count))
        n = size[tasks][..., None]  # (batch, count, 1): runs of each drawn task
        picks = np.floor(rng.random((batch, count, widest)) * n).astype(int)
        used = slots < n
        index = tasks[..., None] * widest + picks
        item = (index, None if used.all() else used, used.sum(axis=(1, 2)))
        if keep:
            out.append(item)
        yield item
        done += batch
    if keep:  # kept as how often each resample drew each cell: a call is one product
        index = np.concatenate([o[0] for o in out]).reshape(resamples, -1)
        used = np.concatenate([np.ones(o[0].shape, bool) if o[1] is None else o[1]
                               for o in out]).reshape(resamples, -1)
        rows = np.arange(resamples)[:, None] * (count * widest)
        drawn = np.bincount((rows + index)[used], minlength=resamples * count * widest)
        _KEPT_DRAWS.put(key, cells, [(drawn.reshape(resamples, count * widest).astype(float),
                                      _COUNTS, np.concatenate([o[2] for o in out]))])


@dataclass(frozen=True)
class PairedResult:
    """A's mean minus B's over the shared tasks, its interval and the test's p-value."""

    tasks: int
    mean_diff: float | None
    low: float | None
    high: float | None
    p_value: float | None
    wins_a: int
    wins_b: int
    ties: int
    test: str = "Wilcoxon signed-rank (two-sided, zero differences dropped)"


def paired(a: Mapping[str, Sequence[float]], b: Mapping[str, Sequence[float]], *,
           resamples: int = RESAMPLES, seed: int = SEED) -> tuple[PairedResult,
                                                                   list[tuple[str, float,
                                                                              float]]]:
    """The paired comparison over the tasks both groups ran (each task's mean per group),
    and the per-task (task, mean A, mean B) rows it was computed from."""
    shared = sorted(t for t in set(a) & set(b) if a[t] and b[t])
    rows = [(t, sum(a[t]) / len(a[t]), sum(b[t]) / len(b[t])) for t in shared]
    diffs = [ra - rb for _t, ra, rb in rows]
    wins_a = sum(d > 0 for d in diffs)
    wins_b = sum(d < 0 for d in diffs)
    ties = len(diffs) - wins_a - wins_b
    if not diffs:
        return PairedResult(0, None, None, None, None, 0, 0, 0), rows
    mean = sum(diffs) / len(diffs)
    low = high = p_value = None
    if len(diffs) >= 2:
        np, stats = _libs()
        values = np.array(diffs)
        if np.all(values == values[0]):
            low = high = float(values[0])
        else:
            found = stats.bootstrap((values,), np.mean, n_resamples=resamples,
                                    method="percentile", confidence_level=LEVEL,
                                    rng=np.random.default_rng(seed))
            low, high = float(found.confidence_interval.low), \
                float(found.confidence_interval.high)
        nonzero = values[values != 0]
        p_value = 1.0 if nonzero.size == 0 else float(
            stats.wilcoxon(nonzero, zero_method="wilcox", alternative="two-sided").pvalue)
    return PairedResult(len(diffs), round(mean, 6),
                        None if low is None else round(low, 6),
                        None if high is None else round(high, 6),
                        None if p_value is None else round(p_value, 6),
                        wins_a, wins_b, ties), rows
