"""Stage III candidates: what a run is and what it came to (`records`), the published
candidate environment (`env`), the staged trees (`staging`, `tree_copy`), the run lease and
per-run scratch (`scratch`), one run on both trees (`run`), scope checks (`scope`) and the
adjudication (`judge`). Built on the exec boundary (:mod:`..boundary`).
"""
