"use strict";
// Display width in terminal columns, and making cell text safe for one line.

const { ZERO, WIDE } = require("./unicode-data");

const ELLIPSIS = "\u2026";
const NEWLINE_MARK = "\u21b5";

/** Binary search in a flat list of inclusive [first, last] pairs. */
function inRanges(table, cp) {
  let lo = 0;
  let hi = table.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (cp < table[2 * mid]) hi = mid - 1;
    else if (cp > table[2 * mid + 1]) lo = mid + 1;
    else return true;
  }
  return false;
}

/** Columns taken by one code point: 0 for marks and format characters, 2 for wide ones. */
function charWidth(cp) {
  if (inRanges(ZERO, cp)) return 0;
  if (inRanges(WIDE, cp)) return 2;
  return 1;
}

function textWidth(text) {
  let total = 0;
  for (const ch of text) total += charWidth(ch.codePointAt(0));
  return total;
}

/** Line breaks become `newline`, tabs a space, other C0 controls and DEL caret notation. */
function visible(text, newline = NEWLINE_MARK) {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    const code = text.charCodeAt(i);
    if (ch === "\r" || ch === "\n") {
      out += newline;
      if (ch === "\r" && text[i + 1] === "\n") i++;
    } else if (ch === "\t") {
      out += " ";
    } else if (code < 0x20 || code === 0x7f) {
      out += "^" + String.fromCharCode(code ^ 0x40);
    } else {
      out += ch;
    }
  }
  return out;
}

/** Cut `text` to at most `limit` columns, marking the cut with an ellipsis. */
function truncate(text, limit) {
  if (textWidth(text) <= limit) return text;
  const room = limit - 1;
  let used = 0;
  let kept = "";
  for (const ch of text) {
    const w = charWidth(ch.codePointAt(0));
    if (used + w > room) break;
    kept += ch;
    used += w;
  }
  return kept + ELLIPSIS;
}

function pad(text, width, align) {
  const fill = " ".repeat(Math.max(0, width - textWidth(text)));
  return align === "right" ? fill + text : text + fill;
}

module.exports = { charWidth, textWidth, visible, truncate, pad, NEWLINE_MARK };
