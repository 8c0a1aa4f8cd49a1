"""Stage III fuzzers: the argv fuzzer (`argv`) and the HTTP fuzzer (`http`, `http_mutate`),
their mutation and minimisation (`mutate`), the candidate scripts they write (`script`), the
trees they build (`build`) and the rounds' view of both trees (`view`). A finding is judged
as a candidate (:mod:`..candidates`).
"""
