"use strict";
const test = require("node:test");
const assert = require("node:assert");
const { parse } = require("../lib/reader");
const { textWidth, truncate, visible } = require("../lib/width");
const { compareCodePoints, sortRows } = require("../lib/cli");

test("quoted fields keep delimiters, quotes and line breaks", () => {
  assert.deepStrictEqual(parse('a,"b ""x""",c\r\n"multi\nline",2,3\n'),
    [["a", 'b "x"', "c"], ["multi\nline", "2", "3"]]);
});

test("an unterminated quote names the line it opened on", () => {
  assert.throws(() => parse('x\ny,"open\nmore\n'), /line 2/);
});

test("display width of wide and combining characters", () => {
  assert.strictEqual(textWidth("東京"), 4);
  assert.strictEqual(textWidth("e\u0301"), 1);
  assert.strictEqual(truncate("東京都", 4), "東…");
  assert.strictEqual(visible("a\r\nb\tc"), "a\u21b5b c");
});

test("strings sort by code point, numbers before text", () => {
  assert.ok(compareCodePoints("\uff5e", "\u{1f600}") < 0);
  const rows = [["10"], ["x"], ["9"]];
  assert.deepStrictEqual(sortRows(rows, 0, true, false), [["9"], ["10"], ["x"]]);
});
