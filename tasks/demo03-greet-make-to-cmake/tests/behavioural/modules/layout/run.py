"""Module 'layout': the installed tree and the library's ABI as State A installs them."""

import os
import sys

sys.path.insert(0, os.path.join(os.environ["SRB_SUITE_DIR"], "lib"))
from kit import check, expected, layout_facts, prefix, write_result  # noqa: E402

want, got = expected("layout"), layout_facts(prefix())
sys.exit(write_result([
    check("installed-files", got["files"] == want["files"], f"installed: {got['files']}"),
    check("header-unchanged", got["header_sha256"] == want["header_sha256"],
          "include/greet.h is State A's" if got["header_sha256"] == want["header_sha256"]
          else "include/greet.h differs from State A's (or is missing)"),
    check("soname", got["soname"] == want["soname"], f"SONAME {got['soname']!r}"),
    check("exported-symbols", got["symbols"] == want["symbols"], f"exports {got['symbols']}"),
]))
