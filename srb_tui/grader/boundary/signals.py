"""Signal numbers and handlers without the ``signal`` module's enums.

``signal`` wraps the C module ``_signal`` in enum classes, which alone costs the
``srb-submission`` launcher (started once per case) about 5 ms of import. The launcher and
:mod:`.session_end` need only the numbers, ``signal()`` and ``SIG_DFL``, which ``_signal``
has as plain ints. An interpreter without ``_signal`` gets the ordinary module.
"""

from __future__ import annotations

try:
    import _signal as signal  # type: ignore[import-not-found]
except ImportError:  # not CPython
    import signal

__all__ = ["signal"]
