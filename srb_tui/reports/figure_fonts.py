"""The figure files' font: matplotlib's DejaVu Sans cut down to the characters a report
uses, so each PDF's font subset starts from a small font.

Every PDF embeds its fonts (``pdf.fonttype`` 42), and matplotlib makes that subset with
fontTools from the whole font file: for DejaVu Sans and its bold (about 6,000 glyphs each,
with large layout tables) that was two thirds of a PDF's time, ~1 s of the four figures'.
Here the two files are cut once to Latin, punctuation, arrows, mathematical operators and
box drawing -- every glyph's outline, hinting and layout tables (kerning) kept -- under the
family name ``srb DejaVu Sans``, and kept in matplotlib's cache folder; the figures use that
family first and the whole DejaVu Sans for any other character (matplotlib's font
fallback). A PNG drawn with it is pixel for pixel the one drawn with DejaVu Sans.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

FAMILY = "srb DejaVu Sans"
FILES = ("DejaVuSans.ttf", "DejaVuSans-Bold.ttf")
# Basic Latin to Latin Extended-A, general punctuation (dashes, bullets, ellipsis),
# arrows, mathematical operators, box drawing, check marks.
RANGES = ((0x20, 0x17F), (0x2000, 0x206F), (0x2190, 0x21FF), (0x2200, 0x22FF),
          (0x2500, 0x257F), (0x2713, 0x2717))

_registered: list[str] = []


def figure_families() -> list[str]:
    """``font.family`` for the figure files: the cut font first (made and registered
    once), then DejaVu Sans; DejaVu Sans alone when the cut font cannot be made."""
    if not _registered:
        try:
            _register()
            _registered.append(FAMILY)
        except Exception:  # any failure leaves the whole font: slower, same figure
            _registered.append("")
    return [FAMILY, "DejaVu Sans"] if _registered[0] else ["DejaVu Sans"]


def _register() -> None:
    import fontTools  # type: ignore[import-untyped]
    import matplotlib
    from matplotlib import font_manager

    folder = _folder(f"srb-fonts-{matplotlib.__version__}-{fontTools.version}")
    for name in FILES:
        target = folder / name
        if not target.exists():
            _cut(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / name, target)
        font_manager.fontManager.addfont(str(target))


def _folder(name: str) -> Path:
    import matplotlib

    for base in (Path(matplotlib.get_cachedir()), Path(tempfile.gettempdir())):
        folder = base / name
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        return folder
    raise OSError("no folder to keep the figures' font in")


def _cut(source: Path, target: Path) -> None:
    from fontTools import subset
    from fontTools.ttLib import TTFont  # type: ignore[import-untyped]

    options = subset.Options(glyph_names=True, recommended_glyphs=True, hinting=True)
    options.layout_features = ["*"]  # kerning and every other feature kept
    font = TTFont(source)
    cutter = subset.Subsetter(options=options)
    cutter.populate(text="".join(chr(c) for low, high in RANGES for c in range(low, high + 1)))
    cutter.subset(font)
    _rename(font)
    partial = target.with_suffix(".part")
    font.save(partial)
    partial.replace(target)  # a concurrent maker or a kill never leaves half a file


def _rename(font: Any) -> None:
    """The family (and full and PostScript names) become ``srb DejaVu Sans``: the font
    manager must not take it for the whole DejaVu Sans."""
    for record in font["name"].names:
        text = str(record.toUnicode())
        if record.nameID in (1, 4, 16):
            record.string = text.replace("DejaVu Sans", FAMILY)
        elif record.nameID == 6:
            record.string = text.replace("DejaVuSans", "srbDejaVuSans")
