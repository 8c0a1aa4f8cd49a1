"""Folders srb puts on a module's PYTHONPATH inside a stage container.

``swerefactor/`` here is srb's own stand-in for the published harness's runtime package,
used only when the stage image carries no ``/opt/swerefactor``: a module that runs
``pytest -p swerefactor.pytest_module`` or imports ``swerefactor.contract`` finds srb's
implementation of the same contract. srb itself imports only ``swerefactor.contract``'s list of
names (``CONTRACT_ENV``, for :mod:`srb_tui.grader.candidates.env`), so the list has one home;
the package imports nothing of srb.
"""
