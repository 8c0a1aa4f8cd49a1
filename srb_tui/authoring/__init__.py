"""Task authoring: ``srb tasks new`` writes a complete task in the published schema from a
State A folder (:mod:`.scaffold`), with the languages it knows (:mod:`.languages`), the
author's command lines (:mod:`.cases`) and a deterministic State A archive (:mod:`.archive`).
The files it writes come from ``templates/`` (package data)."""
