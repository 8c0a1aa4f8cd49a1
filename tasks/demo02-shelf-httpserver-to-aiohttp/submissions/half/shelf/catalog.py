"""The catalogue: books held in memory, seeded from a fixed list at start-up.

Nothing here knows about HTTP.  Every server process starts from the same
seed, so two fresh servers always answer the same request the same way.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

SEED: tuple[tuple[str, str, int, tuple[str, ...], bool], ...] = (
    ("The Left Hand of Darkness", "Ursula K. Le Guin", 1969, ("sf", "classic"), True),
    ("A Wizard of Earthsea", "Ursula K. Le Guin", 1968, ("fantasy", "classic"), False),
    ("Kindred", "Octavia E. Butler", 1979, ("sf", "history"), True),
    ("Parable of the Sower", "Octavia E. Butler", 1993, ("sf",), True),
    ("Die Blechtrommel", "Günter Grass", 1959, ("novel", "german"), True),
    ("Pedro Páramo", "Juan Rulfo", 1955, ("novel", "mexico"), False),
    ("Cien años de soledad", "Gabriel García Márquez", 1967, ("novel", "classic"), True),
    ("Ficciones", "Jorge Luis Borges", 1944, ("stories", "classic"), True),
    ("吾輩は猫である", "夏目漱石", 1905, ("novel", "japan"), True),
    ("Мастер и Маргарита", "Михаил Булгаков", 1967, ("novel", "classic"), False),
    ("Solaris", "Stanisław Lem", 1961, ("sf",), True),
    ("The Dispossessed", "Ursula K. Le Guin", 1974, ("sf",), True),
)

SORT_KEYS = ("id", "title", "author", "year")


def fold(text: str) -> str:
    """The form names are compared in: NFC, then case-folded."""
    return unicodedata.normalize("NFC", text).casefold()


@dataclass
class Book:
    id: int
    title: str
    author: str
    year: int
    tags: list[str] = field(default_factory=list)
    available: bool = True

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "title": self.title,
            "author": self.author,
            "year": self.year,
            "tags": list(self.tags),
            "available": self.available,
        }

    def to_text(self) -> str:
        line = f"#{self.id} {self.title} by {self.author} ({self.year})"
        if self.tags:
            line += " [" + ", ".join(self.tags) + "]"
        if not self.available:
            line += " (on loan)"
        return line


class Catalog:
    """All books, in id order."""

    def __init__(self) -> None:
        self.books: dict[int, Book] = {}
        self.next_id = 1
        for title, author, year, tags, available in SEED:
            self.add(title, author, year, list(tags), available)

    def add(self, title: str, author: str, year: int, tags: list[str],
            available: bool = True) -> Book:
        book = Book(self.next_id, title, author, year, tags, available)
        self.books[book.id] = book
        self.next_id += 1
        return book

    def get(self, book_id: int) -> Book | None:
        return self.books.get(book_id)

    def delete(self, book_id: int) -> bool:
        return self.books.pop(book_id, None) is not None

    def select(self, *, tags: list[str], year: int | None, available: bool | None,
               title_part: str | None) -> list[Book]:
        wanted = [fold(tag) for tag in tags]
        found = []
        for book in self.books.values():
            own = {fold(tag) for tag in book.tags}
            if any(tag not in own for tag in wanted):
                continue
            if year is not None and book.year != year:
                continue
            if available is not None and book.available != available:
                continue
            if title_part is not None and fold(title_part) not in fold(book.title):
                continue
            found.append(book)
        return found

    @staticmethod
    def ordered(books: list[Book], key: str, descending: bool) -> list[Book]:
        def sort_key(book: Book) -> tuple[object, int]:
            value: object = getattr(book, key)
            if isinstance(value, str):
                value = fold(value)
            return value, book.id

        return sorted(books, key=sort_key, reverse=descending)

    def by_author(self, name: str) -> list[Book]:
        wanted = fold(name.strip())
        return [book for book in self.books.values() if fold(book.author) == wanted]

    def search(self, text: str) -> list[int]:
        needle = fold(text)
        return [
            book.id
            for book in self.books.values()
            if needle in fold(book.title) or needle in fold(book.author)
        ]

    def stats(self) -> dict[str, object]:
        tags: dict[str, int] = {}
        for book in self.books.values():
            for tag in book.tags:
                tags[tag] = tags.get(tag, 0) + 1
        return {
            "books": len(self.books),
            "authors": len({fold(book.author) for book in self.books.values()}),
            "on_loan": sum(1 for book in self.books.values() if not book.available),
            "tags": dict(sorted(tags.items())),
        }
