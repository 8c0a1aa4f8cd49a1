"""Stage II: the suite manifest (`manifest`), the module runs under the module contract
(`run`, with their environment in `module_env`) and the checks read from their result
files (`checks`). Runs modules through the exec boundary (:mod:`..boundary`).
"""
