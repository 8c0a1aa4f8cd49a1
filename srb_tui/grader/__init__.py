"""srb's standalone stage grader (standard library only, relative imports only).

srb copies this folder into a stage image and runs it there as uid 0 with only SETUID,
SETGID and KILL (``python3 -I -c <boot> SUBCOMMAND ...``), so nothing here may import from
outside the folder. Its rooms, each importing only the ones below it:

* `cli` (with `__main__`): the grader's subcommands;
* `suite/` (Stage II: the suite manifest, the module runs, their checks), `audit/` (Stage I:
  the reviewer's tools, injection scan, validation and voting) and `fuzzing/` (Stage III's
  argv and HTTP fuzzers), independent of one another;
* `candidates/`: Stage III candidate runs on both trees and their verdicts;
* `boundary/`: the exec boundary and sandbox (slot uids, the ``srb-submission`` launcher,
  the exec broker, process groups, resets, container lockdown and tree digests);
* `envelope` and `fingerprint` (result documents), `manifests/` (the task files' one
  reader) and `contract` (the published constants, a leaf every srb room may import).
"""
