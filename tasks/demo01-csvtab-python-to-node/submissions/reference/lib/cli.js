"use strict";
// The csvtab command line: options, column selection, sorting and output.

const { CsvtabError, UsageError } = require("./errors");
const { load, normaliseEncoding } = require("./reader");
const { NUMBER, Table, render } = require("./render");

const VERSION = "1.2.0";

const HELP = `usage: csvtab [OPTIONS] [FILE ...]

Render CSV data as a table. With no FILE, or when FILE is -, read
standard input. Several files are concatenated; the header row of every
file after the first is skipped.

options:
  -f, --format FORMAT    table (default), markdown, json or tsv
      --style STYLE      table borders: ascii (default), box or plain
  -d, --delimiter CHAR   field separator, one character (default ,);
                         'tab' or '\\t' selects a tab
  -H, --no-header        the first row is data, not column names
  -c, --columns LIST     comma-separated column names or 1-based numbers
  -s, --sort COLUMN      sort rows by a column name or number
  -n, --numeric          sort numerically; non-numbers sort last
  -r, --reverse          reverse the sort order
  -w, --max-width N      truncate cells wider than N columns with an ellipsis
  -a, --align MODE       left, right or auto (default: numbers right)
  -e, --encoding NAME    utf-8 (default), utf-8-sig, latin-1 or ascii
  -h, --help             show this help and exit
  -V, --version          show the version and exit

exit status: 0 on success, 1 when input cannot be read or parsed,
2 when the command line is wrong.
`;

// long option name -> takes a value
const OPTIONS = new Map([
  ["format", true], ["style", true], ["delimiter", true], ["no-header", false],
  ["columns", true], ["sort", true], ["numeric", false], ["reverse", false],
  ["max-width", true], ["align", true], ["encoding", true], ["help", false], ["version", false],
]);
const SHORT = new Map([
  ["f", "format"], ["d", "delimiter"], ["H", "no-header"], ["c", "columns"], ["s", "sort"],
  ["n", "numeric"], ["r", "reverse"], ["w", "max-width"], ["a", "align"], ["e", "encoding"],
  ["h", "help"], ["V", "version"],
]);
const CHOICES = [
  ["format", ["table", "markdown", "json", "tsv"]],
  ["style", ["ascii", "box", "plain"]],
  ["align", ["left", "right", "auto"]],
];
const WHOLE = /^[0-9]+$/;

/** Read ASCII digits as a number; absurdly long ones count as 10**9. Null if not digits. */
function whole(text) {
  if (!WHOLE.test(text)) return null;
  const digits = text.replace(/^0+/, "") || "0";
  return digits.length <= 9 ? Number(digits) : 1e9;
}

/** Thrown to finish early with text for standard output (help, version). */
class Finished {
  constructor(text) {
    this.text = text;
  }
}

function parseArgs(argv) {
  const opts = new Map([
    ["format", "table"], ["style", "ascii"], ["delimiter", ","], ["align", "auto"],
    ["encoding", "utf-8"],
  ]);
  const files = [];
  const take = (name, value) => {
    if (name === "help") throw new Finished(HELP);
    if (name === "version") throw new Finished(`csvtab ${VERSION}\n`);
    opts.set(name, value);
  };
  let index = 0;
  let optionsDone = false;
  while (index < argv.length) {
    const arg = argv[index++];
    if (optionsDone || arg === "-" || !arg.startsWith("-")) {
      files.push(arg);
    } else if (arg === "--") {
      optionsDone = true;
    } else if (arg.startsWith("--")) {
      const eq = arg.indexOf("=", 2);
      const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
      if (!OPTIONS.has(name)) throw new UsageError(`unknown option --${name}`);
      if (!OPTIONS.get(name)) {
        if (eq >= 0) throw new UsageError(`option --${name} does not take a value`);
        take(name, true);
        continue;
      }
      let value;
      if (eq >= 0) value = arg.slice(eq + 1);
      else if (index < argv.length) value = argv[index++];
      else throw new UsageError(`option --${name} needs a value`);
      take(name, value);
    } else {
      const letters = Array.from(arg);
      for (let pos = 1; pos < letters.length; pos++) {
        const name = SHORT.get(letters[pos]);
        if (name === undefined) throw new UsageError(`unknown option -${letters[pos]}`);
        if (!OPTIONS.get(name)) {
          take(name, true);
          continue;
        }
        let value;
        if (pos + 1 < letters.length) value = letters.slice(pos + 1).join("");
        else if (index < argv.length) value = argv[index++];
        else throw new UsageError(`option -${letters[pos]} needs a value`);
        take(name, value);
        break;
      }
    }
  }
  return { opts, files };
}

function checkOptions(opts) {
  for (const [name, allowed] of CHOICES) {
    if (!allowed.includes(opts.get(name))) {
      throw new UsageError(`--${name} must be one of: ${allowed.join(", ")}`);
    }
  }
  opts.set("encoding", normaliseEncoding(opts.get("encoding")));
  let delimiter = opts.get("delimiter");
  if (delimiter === "tab" || delimiter === "\\t") delimiter = "\t";
  if (Array.from(delimiter).length !== 1 || '"\r\n'.includes(delimiter)) {
    throw new UsageError("--delimiter must be one character other than a quote or newline");
  }
  opts.set("delimiter", delimiter);
  if (opts.has("max-width")) {
    const number = whole(opts.get("max-width"));
    if (number === null || number < 1) {
      throw new UsageError("--max-width must be a positive whole number");
    }
  }
}

function findColumn(spec, header, count) {
  if (header !== null && header.includes(spec)) return header.indexOf(spec);
  const number = whole(spec);
  if (number !== null && number >= 1 && number <= count) return number - 1;
  throw new UsageError(`no such column: ${JSON.stringify(spec)}`);
}

/** Order two strings by Unicode code point rather than by UTF-16 unit. */
function compareCodePoints(a, b) {
  const len = Math.min(a.length, b.length);
  for (let i = 0; i < len; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return rank(x) - rank(y);
  }
  return a.length - b.length;
}

function rank(unit) {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000;
  if (unit >= 0xe000) return unit - 0x800;
  return unit;
}

/** Stable sort on one column; numbers first, then everything else, when numeric. */
function sortRows(rows, col, numeric, reverse) {
  let compare;
  if (numeric) {
    const key = (row) => (NUMBER.test(row[col]) ? [0, Number(row[col])] : [1, 0]);
    compare = (a, b) => {
      const [ga, va] = key(a);
      const [gb, vb] = key(b);
      if (ga !== gb) return ga - gb;
      return va < vb ? -1 : va > vb ? 1 : 0;
    };
  } else {
    compare = (a, b) => compareCodePoints(a[col], b[col]);
  }
  return rows.slice().sort(reverse ? (a, b) => compare(b, a) : compare);
}

function buildTable(records, opts) {
  const count = records.reduce((most, record) => Math.max(most, record.length), 0);
  const squared = records.map((record) => record.concat(Array(count - record.length).fill("")));
  let header = null;
  let rows = squared;
  if (!opts.get("no-header")) {
    const named = records[0].length;
    header = squared[0].map((name, col) => (col < named ? name : `c${col + 1}`));
    rows = squared.slice(1);
  }
  if (opts.has("sort")) {
    const col = findColumn(opts.get("sort"), header, count);
    rows = sortRows(rows, col, Boolean(opts.get("numeric")), Boolean(opts.get("reverse")));
  }
  if (opts.has("columns")) {
    const picked = opts.get("columns").split(",").map((spec) => findColumn(spec, header, count));
    rows = rows.map((row) => picked.map((col) => row[col]));
    if (header !== null) header = picked.map((col) => header[col]);
  }
  return new Table(header, rows);
}

function run(argv) {
  const { opts, files } = parseArgs(argv);
  checkOptions(opts);
  const records = load(files.length ? files : ["-"], opts.get("delimiter"),
    opts.get("encoding"), !opts.get("no-header"));
  if (records.length === 0) return opts.get("format") === "json" ? "[]\n" : "";
  const table = buildTable(records, opts);
  const maxWidth = opts.has("max-width") ? whole(opts.get("max-width")) : null;
  return render(table, opts.get("format"), opts.get("style"), opts.get("align"), maxWidth);
}

/** Run the program; returns the exit status after writing output or a message. */
function main(argv) {
  let output;
  try {
    output = run(argv);
  } catch (err) {
    if (err instanceof Finished) {
      output = err.text;
    } else if (err instanceof CsvtabError) {
      let message = `csvtab: ${err.message}\n`;
      if (err.status === 2) message += "usage: csvtab [OPTIONS] [FILE ...] (see --help)\n";
      process.stderr.write(message);
      return err.status;
    } else {
      throw err;
    }
  }
  process.stdout.on("error", (err) => {
    if (err.code !== "EPIPE") throw err;
  });
  process.stdout.write(Buffer.from(output, "utf8"));
  return 0;
}

module.exports = { main, parseArgs, sortRows, compareCodePoints, VERSION };
