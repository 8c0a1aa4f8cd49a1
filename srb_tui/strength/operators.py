"""Mutation operators over tree-sitter nodes: one table for every grammar."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

OPERATORS = ("comparison", "boolean", "constant", "arithmetic", "statement", "string-case")

COMPARISON = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "==",
              "===": "!==", "!==": "===", "is": "is not", "is not": "is",
              "in": "not in", "not in": "in"}
LOGICAL = {"and": "or", "or": "and", "&&": "||", "||": "&&"}
LITERALS = {"True": "False", "False": "True", "true": "false", "false": "true"}
ARITHMETIC = {"+": "-", "-": "+", "*": "/", "/": "*", "//": "*", "%": "*"}
BINARY_PARENTS = frozenset({"comparison_operator", "binary_expression", "binary_operator",
                            "boolean_operator"})
INTEGERS = frozenset({"integer", "number_literal", "number", "int_literal",
                      "integer_literal", "decimal_integer_literal"})
STRING_PIECES = frozenset({"string_content", "string_fragment",
                           "interpreted_string_literal_content"})
INTERPOLATIONS = frozenset({"interpolation", "template_substitution"})
DECIMAL = re.compile(r"[0-9]{1,9}")
LETTER = re.compile(r"[A-Za-z]")

Site = tuple[str, int, int, str]  # operator, start, end, after


def _text(node: Any) -> str:
    return bytes(node.text).decode("utf-8", "replace")


def _is_docstring(node: Any) -> bool:
    """A Python string piece whose statement is the string alone."""
    string = node.parent
    stmt = string.parent if string is not None else None
    return stmt is not None and stmt.type == "expression_statement" and stmt.named_child_count == 1


def _main_guard(node: Any) -> bool:
    cur = node
    for _ in range(3):
        if cur is None:
            return False
        if cur.type == "comparison_operator" and "__name__" in _text(cur):
            return True
        cur = cur.parent
    return False


def _operand_strings(parent: Any) -> bool:
    kids = [c for c in parent.named_children if "comment" not in c.type]
    return len(kids) == 2 and all("string" in c.type for c in kids)


def _statement(node: Any, language: str) -> Iterator[Site]:
    if language == "python":
        if node.type == "return_statement" and node.named_child_count > 0:
            yield ("statement", node.start_byte, node.end_byte, "pass")
        if node.type == "expression_statement" and node.named_child_count == 1:
            kind = node.named_children[0].type
            if kind not in ("assignment", "string", "concatenated_string"):
                yield ("statement", node.start_byte, node.end_byte, "pass")
        return
    if node.type != "expression_statement" or node.parent is None:
        return
    if node.parent.type not in ("compound_statement", "block", "statement_block",
                                "statement_list", "program", "translation_unit",
                                "case_statement", "switch_case", "expression_case"):
        return
    text = _text(node)
    if language == "go":
        yield ("statement", node.start_byte, node.end_byte, "_ = 0")
    elif text.rstrip().endswith(";") or language in ("javascript", "typescript", "tsx"):
        yield ("statement", node.start_byte, node.end_byte, ";")


def node_sites(node: Any, language: str) -> Iterator[Site]:
    """Every candidate site rooted at `node` (not yet checked to re-parse)."""
    kind = node.type
    parent = node.parent
    ptype = parent.type if parent is not None else ""
    text = _text(node)
    if not node.is_named and ptype in BINARY_PARENTS:
        if text in COMPARISON and not _main_guard(node):
            yield ("comparison", node.start_byte, node.end_byte, COMPARISON[text])
        elif text in LOGICAL:
            yield ("boolean", node.start_byte, node.end_byte, LOGICAL[text])
        elif text in ARITHMETIC and not _operand_strings(parent):
            yield ("arithmetic", node.start_byte, node.end_byte, ARITHMETIC[text])
    if node.is_named and text in LITERALS and node.child_count == 0:
        yield ("boolean", node.start_byte, node.end_byte, LITERALS[text])
    if kind == "not_operator" or (kind == "unary_expression" and node.child_count == 2
                                  and node.children[0].type == "!"):
        arg = node.child_by_field_name("argument") or node.children[-1]
        yield ("boolean", node.start_byte, node.end_byte, _text(arg))
    if kind in INTEGERS and DECIMAL.fullmatch(text) and (text == "0" or text[0] != "0"):
        value = int(text)
        yield ("constant", node.start_byte, node.end_byte, str(value + 1))
        if value > 0:
            yield ("constant", node.start_byte, node.end_byte, str(value - 1))
    if kind in STRING_PIECES and LETTER.search(text) and "\\" not in text \
            and node.child_count == 0 and parent is not None \
            and not any(c.type in INTERPOLATIONS for c in parent.children) \
            and not (language == "python" and _is_docstring(node)) \
            and text != "__main__":
        yield ("string-case", node.start_byte, node.end_byte, text.swapcase())
    yield from _statement(node, language)


def walk_sites(root: Any, language: str) -> Iterator[Site]:
    """Depth-first over the tree, skipping comments."""
    stack = [root]
    while stack:
        node = stack.pop()
        if "comment" in node.type:
            continue
        yield from node_sites(node, language)
        stack.extend(reversed(node.children))
