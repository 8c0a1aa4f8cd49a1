"""srb's implementation of the module-side contract of the published harness.

Importable as ``swerefactor`` inside a stage container whose image does not carry the
published runtime at ``/opt/swerefactor``. Two modules: :mod:`.contract` (the environment
names a module is given and the scrub for programs it starts) and :mod:`.pytest_module`
(a pytest plugin that writes ``$SRB_RESULT``). Standard library only.
"""

PROVIDER = "srb"
