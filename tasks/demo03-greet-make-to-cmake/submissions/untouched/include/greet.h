/* libgreet: format greeting lines. */
#ifndef GREET_H
#define GREET_H

#include <stddef.h>

#ifndef GREET_MAX_NAME
#define GREET_MAX_NAME 24 /* bytes of a name kept; longer names are cut */
#endif

#define GREET_VERSION "1.0.0"

/* The library's version string ("1.0.0"). */
const char *greet_version(void);

/* Write "<salute>, <name>!" into out (at most n bytes, always terminated); the name is cut
 * to GREET_MAX_NAME bytes and upper-cased (ASCII) when upper is not 0. Returns the length
 * written, or -1 when salute or name is NULL or out cannot hold a single byte. */
int greet_line(char *out, size_t n, const char *salute, const char *name, int upper);

#endif
