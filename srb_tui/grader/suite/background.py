"""One call run by a thread of its own while the suite runner goes on (:class:`Background`).

Stage II's bookkeeping between two modules is partly independent of the work that must
precede the next module (ending the submission's processes, digesting the suite): a
module's result is parsed and encoded while the submission's uid is killed and wiped, and
the checkpoint is written while the next module's folders and boundary are made. The
runner waits for each (:meth:`Background.result`) before it depends on it, so the order of
what is on disk when a module starts is the same as without the thread.
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
