"""Folders srb puts on a module's PYTHONPATH inside a stage container.

``swerefactor/`` here is srb's own stand-in for the published harness's runtime package,
used only when the stage image carries no ``/opt/swerefactor``: a module that runs
``pytest -p swerefactor.pytest_module`` or imports ``swerefactor.contract`` finds srb's
implementation of the same contract. Nothing here is imported by srb itself.
"""
