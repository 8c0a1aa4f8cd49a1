"""A small program that is not a demo, for ``srb tasks new``: ``roman``, a Python CLI that
turns each line of standard input into a Roman numeral or back (State A), and an honest
Node.js port of it (the reference). Both work on bytes, so every input has one answer."""

from __future__ import annotations

from pathlib import Path

STATE_A_ROMAN = r'''#!/usr/bin/env python3
"""roman: each line of standard input, a number (1-3999) or a Roman numeral, converted."""
import sys

USAGE = "usage: roman [-l|--lower] [-h|--help] < lines\n"
WHITESPACE = b" \t\n\r\x0b\x0c"
NUMERALS = ((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
            (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"))


def to_roman(number):
    out = ""
    for value, letters in NUMERALS:
        while number >= value:
            out += letters
            number -= value
    return out


FROM_ROMAN = {to_roman(n): n for n in range(1, 4000)}


def convert(line, lower):
    if line.isdigit():
        number = int(line)
        if 1 <= number <= 3999:
            text = to_roman(number)
            return text.lower() if lower else text
        return None
    found = FROM_ROMAN.get(line.decode("ascii", "replace"))
    return None if found is None else str(found)


def main(argv):
    lower = False
    for arg in argv:
        if arg in ("-l", "--lower"):
            lower = True
        elif arg in ("-h", "--help"):
            sys.stdout.write(USAGE)
            return 0
        else:
            sys.stderr.write(f"roman: unknown argument {arg!r}\n" + USAGE)
            return 2
    bad = 0
    out = []
    for raw in sys.stdin.buffer.read().split(b"\n"):
        line = raw.strip(WHITESPACE)
        if not line:
            continue
        answer = convert(line, lower)
        if answer is None:
            bad += 1
            answer = "?"
        out.append(answer + "\n")
    sys.stdout.write("".join(out))
    if bad:
        sys.stderr.write(f"roman: {bad} line(s) could not be converted\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
'''

README = "# roman\n\nConverts numbers to Roman numerals and back, one per line of stdin.\n"

NODE_ROMAN = r'''#!/usr/bin/env node
'use strict';
// roman: each line of standard input, a number (1-3999) or a Roman numeral, converted.
const fs = require('fs');

const USAGE = 'usage: roman [-l|--lower] [-h|--help] < lines\n';
const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d, 0x0b, 0x0c]);
const NUMERALS = [[1000, 'M'], [900, 'CM'], [500, 'D'], [400, 'CD'], [100, 'C'],
  [90, 'XC'], [50, 'L'], [40, 'XL'], [10, 'X'], [9, 'IX'], [5, 'V'], [4, 'IV'], [1, 'I']];

function toRoman(number) {
  let out = '';
  for (const [value, letters] of NUMERALS) {
    while (number >= value) {
      out += letters;
      number -= value;
    }
  }
  return out;
}

const fromRoman = new Map();
for (let n = 1; n < 4000; n++) fromRoman.set(toRoman(n), n);

function strip(bytes) {
  let start = 0;
  let end = bytes.length;
  while (start < end && WHITESPACE.has(bytes[start])) start++;
  while (end > start && WHITESPACE.has(bytes[end - 1])) end--;
  return bytes.subarray(start, end);
}

function allDigits(bytes) {
  if (bytes.length === 0) return false;
  for (const b of bytes) if (b < 0x30 || b > 0x39) return false;
  return true;
}

function convert(line, lower) {
  if (allDigits(line)) {
    let digits = line.toString('latin1').replace(/^0+/, '');
    if (digits.length === 0 || digits.length > 4) return null;
    const number = Number(digits);
    if (number < 1 || number > 3999) return null;
    const text = toRoman(number);
    return lower ? text.toLowerCase() : text;
  }
  for (const b of line) if (b > 0x7f) return null;
  const found = fromRoman.get(line.toString('latin1'));
  return found === undefined ? null : String(found);
}

function main(argv) {
  let lower = false;
  for (const arg of argv) {
    if (arg === '-l' || arg === '--lower') {
      lower = true;
    } else if (arg === '-h' || arg === '--help') {
      process.stdout.write(USAGE);
      return 0;
    } else {
      process.stderr.write(`roman: unknown argument ${JSON.stringify(arg)}\n` + USAGE);
      return 2;
    }
  }
  const data = fs.readFileSync(0);
  const out = [];
  let bad = 0;
  let start = 0;
  while (start <= data.length) {
    let stop = data.indexOf(0x0a, start);
    if (stop === -1) stop = data.length;
    const line = strip(data.subarray(start, stop));
    start = stop + 1;
    if (line.length === 0) continue;
    let answer = convert(line, lower);
    if (answer === null) {
      bad += 1;
      answer = '?';
    }
    out.push(answer + '\n');
  }
  process.stdout.write(out.join(''));
  if (bad) {
    process.stderr.write(`roman: ${bad} line(s) could not be converted\n`);
    return 1;
  }
  return 0;
}

process.exitCode = main(process.argv.slice(2));
'''

NUMBERS = "1\n4\n9\n14\n40\n90\n400\n1994\n2024\n3999\n"
NUMERALS_IN = "I\nIV\nXLII\nMCMXCIV\nMMMCMXCIX\n"
MIXED = "  12  \r\n\nIIII\n0\n4000\nabc\nXIV\n0007\n"

CASES = [
    "",
    "--help",
    "--lower",
    "--bogus",
    "< inputs/numbers.txt",
    "--lower < inputs/numbers.txt",
    "-l < inputs/numerals.txt",
    "< inputs/mixed.txt",
]


def write_state_a(folder: Path) -> Path:
    """State A (bin/roman and a README) under ``folder``."""
    (folder / "bin").mkdir(parents=True)
    entry = folder / "bin" / "roman"
    entry.write_text(STATE_A_ROMAN, encoding="utf-8")
    entry.chmod(0o755)
    (folder / "README.md").write_text(README, encoding="utf-8")
    return folder


def write_inputs(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for name, text in (("numbers.txt", NUMBERS), ("numerals.txt", NUMERALS_IN),
                       ("mixed.txt", MIXED)):
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def write_port(folder: Path) -> Path:
    """The honest Node.js port: bin/roman and a README (no Python anywhere)."""
    (folder / "bin").mkdir(parents=True, exist_ok=True)
    entry = folder / "bin" / "roman"
    entry.write_text(NODE_ROMAN, encoding="utf-8")
    entry.chmod(0o755)
    (folder / "README.md").write_text(README.replace("stdin.", "stdin (Node.js).") ,
                                      encoding="utf-8")
    return folder
