"""The figure files' cut font (``reports.figure_fonts``) changes no pixel of a figure,
and a character outside it is still drawn, from the whole DejaVu Sans."""

from __future__ import annotations

import io

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from srb_tui.reports.figure_fonts import FAMILY, figure_families
from srb_tui.reports.plots import _pyplot


def _draw(text: str, families: list[str], fmt: str) -> bytes:
    plt = _pyplot()
    with plt.rc_context({"font.family": families}):
        fig, ax = plt.subplots(figsize=(3, 1.2), layout="constrained")
        ax.set_title(text, fontweight="bold")
        ax.bar(["Wavy · AV", "To — ≥ 50%"], [1, 2])
        out = io.BytesIO()
        fig.savefig(out, format=fmt, dpi=100)
        plt.close(fig)
    return out.getvalue()


def test_the_cut_font_draws_the_same_pixels() -> None:
    families = figure_families()
    assert families == [FAMILY, "DejaVu Sans"]
    import matplotlib.image as image

    text = "Table 2 · Where each run stops (n = 520 runs)"
    cut = image.imread(io.BytesIO(_draw(text, families, "png")))
    whole = image.imread(io.BytesIO(_draw(text, ["DejaVu Sans"], "png")))
    assert cut.shape == whole.shape and np.array_equal(cut, whole)
    pdf = _draw(text, families, "pdf")
    assert b"srbDejaVuSans" in pdf and b"+DejaVuSans" not in pdf  # the cut font only


def test_a_character_outside_the_cut_font_comes_from_dejavu_sans() -> None:
    pdf = _draw("Ω model · κ", figure_families(), "pdf")  # Greek: not in the cut font
    assert b"srbDejaVuSans" in pdf and b"+DejaVuSans" in pdf
