"""srb's standalone stage grader (standard library only, relative imports only).

srb copies this folder into a stage image and runs it there as uid 0 with only SETUID,
SETGID and KILL (``python3 -I -c <boot> SUBCOMMAND ...``), so nothing here may import from
outside the folder. Modules: `suite` (Stage II runner), `audit_tools` and `review` (Stage I
tools, validation, voting), `candidate` and `fuzz` (Stage III), `envelope` and
`fingerprint` (result documents), `procs` (process groups), `sandbox` (the submission's own
uid: start, kill whole, wipe), `launch` (the ``srb-submission`` launcher of the module
contract), `lockdown` (container set-up, tree digests).
"""
