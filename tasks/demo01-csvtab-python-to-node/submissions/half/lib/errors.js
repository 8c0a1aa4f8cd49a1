"use strict";
// Errors that end the program with a message and a given exit status.

class CsvtabError extends Error {
  constructor(message, status = 1) {
    super(message);
    this.status = status;
  }
}

/** The command line is wrong: exit status 2. */
class UsageError extends CsvtabError {
  constructor(message) {
    super(message, 2);
  }
}

/** An input could not be read, decoded or parsed: exit status 1. */
class InputError extends CsvtabError {
  constructor(message) {
    super(message, 1);
  }
}

module.exports = { CsvtabError, UsageError, InputError };
