"""Stage I: the reviewer's read-only tools over the review roots (`tools`, `files`), the
prompt-injection scan (`injection`) and the review's prompts, validation and votes
(`review`).
"""
