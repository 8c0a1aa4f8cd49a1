"""srb's standalone stage grader (standard library only, relative imports only).

srb copies this folder into a stage image and runs ``python3 -m <folder name> ...`` there, so
nothing here may import from outside the folder. Modules: `suite` (Stage II runner), `audit_tools`
and `review` / `review_loop` (Stage I tools, validation, voting), `candidate` (Stage III
adjudication), `envelope` and `fingerprint` (result documents), `procs` (process groups).
"""
