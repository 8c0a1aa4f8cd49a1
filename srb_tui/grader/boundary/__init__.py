"""The exec boundary and sandbox: who runs submission code and how it ends.

The slot identities and their limits (`slot`, `sandbox`, `wipe`, `ipc_wipe`), the
``srb-submission`` launcher of the module contract (`launch`, `submission`, `session_end`,
`signals`), Stage III's exec broker (`exec_broker` over `seccomp`, `tracee` and the rules of
`exec_rules`), the module boundary of Stage II (`module_boundary`), process groups and bounded
children (`procs`, `bounded`) and the container's lockdown and tree digests (`lockdown`).
Imports only the contract leaf.
"""
