"use strict";
// Formats not ported yet (json, markdown) are still produced by the csvtab
// package in csvtab/, started as a child process with the same arguments.

const path = require("path");
const { spawnSync } = require("child_process");

function delegate(argv) {
  const root = path.resolve(__dirname, "..");
  const child = spawnSync("python3", ["-m", "csvtab", ...argv], {
    stdio: "inherit",
    env: { ...process.env, PYTHONPATH: root, PYTHONDONTWRITEBYTECODE: "1" },
  });
  if (child.error) {
    process.stderr.write(`csvtab: ${child.error.message}\n`);
    return 127;
  }
  return child.status === null ? 1 : child.status;
}

module.exports = { delegate };
