"use strict";
// Reading inputs, decoding them strictly, and splitting CSV text into records.
// Records end at LF, CRLF or a lone CR; blank lines are skipped; a quoted
// field may hold delimiters, doubled quotes and line breaks.

const fs = require("fs");
const { isUtf8 } = require("buffer");
const { InputError, UsageError } = require("./errors");

const ENCODINGS = new Map([
  ["utf-8", "utf-8"], ["utf8", "utf-8"], ["utf-8-sig", "utf-8"], ["utf8-sig", "utf-8"],
  ["latin-1", "latin-1"], ["latin1", "latin-1"], ["iso-8859-1", "latin-1"],
  ["ascii", "ascii"], ["us-ascii", "ascii"],
]);

// What counts as surrounding white space when an encoding name is cleaned up.
const SPACE = "\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const SPACE_EDGES = new RegExp(`^[${SPACE}]+|[${SPACE}]+$`, "g");

function normaliseEncoding(name) {
  const key = name.replace(SPACE_EDGES, "").toLowerCase().replace(/_/g, "-");
  if (!ENCODINGS.has(key)) throw new UsageError(`unsupported encoding: ${JSON.stringify(name)}`);
  return ENCODINGS.get(key);
}

function decode(buf, encoding, source) {
  let text;
  if (encoding === "utf-8") {
    if (!isUtf8(buf)) {
      throw new InputError(`${source}: input is not valid utf-8`);
    }
    text = buf.toString("utf8");
  } else {
    if (encoding === "ascii") {
      const bad = buf.findIndex((b) => b > 0x7f);
      if (bad >= 0) {
        throw new InputError(
          `${source}: cannot decode byte 0x${buf[bad].toString(16)} at offset ${bad} as ascii`);
      }
    }
    text = buf.toString("latin1");
  }
  return text.startsWith("\ufeff") ? text.slice(1) : text;
}

class Parser {
  constructor(text, delimiter, source) {
    this.text = text;
    this.delimiter = delimiter;
    this.source = source;
    this.pos = 0;
    this.line = 1;
  }

  /** Length of the line break at `pos`, or 0. */
  breakAt(pos) {
    const ch = this.text[pos];
    if (ch === "\n") return 1;
    if (ch === "\r") return this.text[pos + 1] === "\n" ? 2 : 1;
    return 0;
  }

  startsDelimiter(pos) {
    return this.text.startsWith(this.delimiter, pos);
  }

  records() {
    const out = [];
    while (this.pos < this.text.length) {
      const brk = this.breakAt(this.pos);
      if (brk) {
        this.pos += brk;
        this.line++;
        continue;
      }
      const fields = [];
      for (;;) {
        const [value, ended] = this.field();
        fields.push(value);
        if (ended) break;
      }
      out.push(fields);
    }
    return out;
  }

  field() {
    const text = this.text;
    if (text[this.pos] === '"') return this.quoted();
    const start = this.pos;
    while (this.pos < text.length) {
      if (this.startsDelimiter(this.pos)) {
        const value = text.slice(start, this.pos);
        this.pos += this.delimiter.length;
        return [value, false];
      }
      const brk = this.breakAt(this.pos);
      if (brk) {
        const value = text.slice(start, this.pos);
        this.pos += brk;
        this.line++;
        return [value, true];
      }
      this.pos++;
    }
    return [text.slice(start), true];
  }

  quoted() {
    const text = this.text;
    const openedOn = this.line;
    this.pos++;
    let value = "";
    for (;;) {
      if (this.pos >= text.length) {
        throw new InputError(`${this.source}: line ${openedOn}: quoted field is never closed`);
      }
      if (text[this.pos] === '"') {
        if (text[this.pos + 1] === '"') {
          value += '"';
          this.pos += 2;
          continue;
        }
        this.pos++;
        break;
      }
      const brk = this.breakAt(this.pos);
      if (brk) {
        value += text.slice(this.pos, this.pos + brk);
        this.pos += brk;
        this.line++;
        continue;
      }
      value += text[this.pos];
      this.pos++;
    }
    if (this.pos >= text.length) return [value, true];
    if (this.startsDelimiter(this.pos)) {
      this.pos += this.delimiter.length;
      return [value, false];
    }
    const brk = this.breakAt(this.pos);
    if (brk) {
      this.pos += brk;
      this.line++;
      return [value, true];
    }
    throw new InputError(`${this.source}: line ${this.line}: unexpected text after a closing quote`);
  }
}

function parse(text, delimiter = ",", source = "<stdin>") {
  return new Parser(text, delimiter, source).records();
}

function readSource(path) {
  try {
    return fs.readFileSync(path === "-" ? 0 : path);
  } catch (err) {
    if (path === "-" && err.code === "EAGAIN") return Buffer.alloc(0);
    throw new InputError(`cannot read ${path}: ${err.code || err.message}`);
  }
}

/** Read every input in order; files after the first lose their header record. */
function load(paths, delimiter, encoding, header) {
  const rows = [];
  paths.forEach((path, index) => {
    const source = path === "-" ? "<stdin>" : path;
    let records = parse(decode(readSource(path), encoding, source), delimiter, source);
    if (header && index > 0) records = records.slice(1);
    rows.push(...records);
  });
  return rows;
}

module.exports = { normaliseEncoding, decode, parse, load };
