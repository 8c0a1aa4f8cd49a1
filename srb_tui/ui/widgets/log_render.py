"""How one stored log line is drawn: colours decoded, control characters made harmless.

Rich only (no Textual), so the rendering is tested and benchmarked on its own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rich.ansi import AnsiDecoder
from rich.segment import Segment
from rich.text import Text

# Control characters a terminal would act on; shown as U+FFFD so a line cannot move the
# cursor or clear the screen. ESC is kept for Rich's ANSI decoder (colours, bold, links):
# whatever escape the decoder does not understand is replaced after decoding.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f]")
_ANSI = AnsiDecoder()


def render_body(raw: str, style: str = "") -> Text:
    """One stored line as the operator should see it: SGR colours and styles rendered
    (npm, pytest and cargo colour their output), control characters and unknown escapes
    shown as U+FFFD. The result's ``plain`` is the text without escapes, which is what
    the view highlights search hits in."""
    text = _CONTROL.sub("\ufffd", raw.expandtabs())
    if "\x1b" not in text:
        return Text(text, style=style)
    body = _ANSI.decode_line(text)
    if "\x1b" in body.plain:
        body = Text(body.plain.replace("\x1b", "\ufffd"), spans=body.spans)
    body.stylize_before(style)
    return body


def no_newlines(segments: Sequence[Segment]) -> list[Segment]:
    return [s for s in segments if s.text != "\n"]


__all__ = ["no_newlines", "render_body"]
