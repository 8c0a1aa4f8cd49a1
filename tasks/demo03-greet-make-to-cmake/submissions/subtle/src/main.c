/* greet: print a greeting line for each name on the command line, or for each line of
 * standard input when no name is given. */
#include "greet.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *to) {
    fputs("usage: greet [-u] [-s SALUTE] [--version] [NAME...]\n", to);
}

static int say(const char *salute, const char *name, int upper) {
    char line[256];
    if (greet_line(line, sizeof line, salute, name, upper) < 0)
        return 1;
    puts(line);
    return 0;
}

int main(int argc, char **argv) {
    const char *salute = "Hello";
    int upper = 0, i = 1, named = 0, status = 0;

    for (; i < argc && argv[i][0] == '-' && argv[i][1] != '\0'; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        } else if (strcmp(argv[i], "-u") == 0) {
            upper = 1;
        } else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc) {
            salute = argv[++i];
        } else if (strcmp(argv[i], "--version") == 0) {
            printf("greet %s\n", greet_version());
            return 0;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "greet: unknown option %s\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    for (; i < argc; i++, named++)
        status |= say(salute, argv[i], upper);
    if (!named) {
        char buf[1024];
        while (fgets(buf, sizeof buf, stdin) != NULL) {
            buf[strcspn(buf, "\r\n")] = '\0';
            if (buf[0] != '\0')
                status |= say(salute, buf, upper);
        }
    }
    return status;
}
