"""csvtab: render CSV data as aligned tables, Markdown, JSON or TSV."""

__version__ = "1.2.0"


class CsvtabError(Exception):
    """An error that ends the program with a message and an exit status."""

    exit_status = 1

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UsageError(CsvtabError):
    """The command line itself is wrong (exit status 2)."""

    exit_status = 2


class InputError(CsvtabError):
    """An input could not be read, decoded or parsed (exit status 1)."""

    exit_status = 1
