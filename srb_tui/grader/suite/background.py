"""One call run by a thread of its own while the suite runner goes on (:class:`Background`).

Between two Stage II modules the submission's uid is killed and its files wiped (by child
processes of that uid, which the thread waits for) while the suite runner digests the suite:
both must be done before the next module, neither depends on the other, and the slot's
children run beside the digest on the second CPU. The runner waits for the thread
(:meth:`Background.result`) before it goes on. (Parsing a module's result or writing the
checkpoint in a thread was measured too: under the GIL it only moved the time elsewhere.)
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Background(Generic[T]):
    """``fn(*args)`` in a daemon thread, started at once; :meth:`result` waits for it and
    returns its value, or raises what it raised."""

    def __init__(self, name: str, fn: Callable[..., T], *args: object) -> None:
        self._fn = fn
        self._args = args
        self._value: T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._fn(*self._args)
        except BaseException as exc:  # handed to the caller by result()
            self._error = exc

    def result(self) -> T:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]
