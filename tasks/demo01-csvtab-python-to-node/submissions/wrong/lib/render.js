"use strict";
// The four output formats: bordered or plain tables, Markdown, JSON and TSV.

const { pad, textWidth, truncate, visible } = require("./width");

const NUMBER = /^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/;

// Per style: top, separator and bottom rules as [left, joint, right, fill], then the bar.
const BORDERS = {
  ascii: [["+", "+", "+", "-"], ["+", "+", "+", "-"], ["+", "+", "+", "-"], "|"],
  box: [
    ["\u250c", "\u252c", "\u2510", "\u2500"],
    ["\u251c", "\u253c", "\u2524", "\u2500"],
    ["\u2514", "\u2534", "\u2518", "\u2500"],
    "\u2502",
  ],
};

function isNumber(text) {
  return NUMBER.test(text);
}

/** A header (or null) and body rows that all have the same length. */
class Table {
  constructor(header, rows) {
    this.header = header;
    this.rows = rows;
  }

  get width() {
    return this.header !== null ? this.header.length : this.rows[0].length;
  }

  /** `auto` right-aligns a column whose non-empty body cells are all numbers. */
  columnAligns(mode) {
    const aligns = [];
    for (let col = 0; col < this.width; col++) {
      if (mode !== "auto") {
        aligns.push(mode);
        continue;
      }
      const values = this.rows.map((row) => row[col]).filter((v) => v !== "");
      aligns.push(values.length > 0 && values.every(isNumber) ? "right" : "left");
    }
    return aligns;
  }
}

function displayCells(table, maxWidth, newline) {
  const lines = (table.header !== null ? [table.header] : []).concat(table.rows);
  return lines.map((line) => line.map((cell) => {
    const shown = visible(cell, newline);
    return maxWidth === null ? shown : truncate(shown, maxWidth);
  }));
}

function columnWidths(cells, minimum = 0) {
  return cells[0].map((_, col) =>
    cells.reduce((widest, line) => Math.max(widest, textWidth(line[col])), minimum));
}

function renderTable(table, style, align, maxWidth) {
  const cells = displayCells(table, maxWidth, "\u21b5");
  const widths = columnWidths(cells);
  const aligns = table.columnAligns(align);
  if (style === "plain") return renderPlain(table, cells, widths, aligns);
  const [top, sep, bottom, bar] = BORDERS[style];
  const rule = ([left, joint, right, fill]) =>
    left + widths.map((w) => fill.repeat(w + 2)).join(joint) + right;
  const row = (line) =>
    bar + line.map((cell, i) => ` ${pad(cell, widths[i], aligns[i])} `).join(bar) + bar;

  const out = [rule(top)];
  let body = cells;
  if (table.header !== null) {
    out.push(row(cells[0]));
    body = cells.slice(1);
    if (body.length > 0) out.push(rule(sep));
  }
  for (const line of body) out.push(row(line));
  out.push(rule(bottom));
  return out.join("\n") + "\n";
}

function trimSpaces(text) {
  return text.replace(/ +$/, "");
}

function renderPlain(table, cells, widths, aligns) {
  const out = [];
  cells.forEach((line, index) => {
    out.push(trimSpaces(line.map((cell, i) => pad(cell, widths[i], aligns[i])).join("  ")));
    if (index === 0 && table.header !== null) {
      out.push(trimSpaces(widths.map((w) => "-".repeat(w)).join("  ")));
    }
  });
  return out.join("\n") + "\n";
}

function renderMarkdown(table, align, maxWidth) {
  let header = table.header;
  if (header === null) header = Array.from({ length: table.width }, (_, col) => `c${col + 1}`);
  const cells = displayCells(new Table(header, table.rows), maxWidth, "<br>")
    .map((line) => line.map((cell) => cell.replace(/\|/g, "\\|")));
  const widths = columnWidths(cells, 3);
  const aligns = table.columnAligns(align);
  const rules = widths.map((w, i) => (aligns[i] === "right" ? "-".repeat(w - 1) + ":" : "-".repeat(w)));
  const row = (line) => "| " + line.map((c, i) => pad(c, widths[i], aligns[i])).join(" | ") + " |";
  const out = [row(cells[0]), "| " + rules.join(" | ") + " |"];
  for (const line of cells.slice(1)) out.push(row(line));
  return out.join("\n") + "\n";
}

function renderJson(table) {
  if (table.rows.length === 0) return "[]\n";
  const items = table.rows.map((line) => {
    const values = line.map((cell) => JSON.stringify(cell));
    if (table.header === null) return "[" + values.join(", ") + "]";
    const pairs = table.header.map((name, i) => `${JSON.stringify(name)}: ${values[i]}`);
    return "{" + pairs.join(", ") + "}";
  });
  return "[\n" + items.map((item) => "  " + item).join(",\n") + "\n]\n";
}

function tsvEscape(text) {
  return text.replace(/\\/g, "\\\\").replace(/\t/g, "\\t").replace(/\n/g, "\\n").replace(/\r/g, "\\r");
}

function renderTsv(table) {
  const lines = (table.header !== null ? [table.header] : []).concat(table.rows);
  return lines.map((line) => line.map(tsvEscape).join("\t") + "\n").join("");
}

function render(table, format, style, align, maxWidth) {
  switch (format) {
    case "table": return renderTable(table, style, align, maxWidth);
    case "markdown": return renderMarkdown(table, align, maxWidth);
    case "json": return renderJson(table);
    default: return renderTsv(table);
  }
}

module.exports = { NUMBER, Table, isNumber, render };
