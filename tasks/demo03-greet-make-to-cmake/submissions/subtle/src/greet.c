#include "greet.h"

#include <stdio.h>
#include <string.h>

const char *greet_version(void) { return GREET_VERSION; }

int greet_line(char *out, size_t n, const char *salute, const char *name, int upper) {
    char kept[GREET_MAX_NAME + 1];
    size_t len;
    int written;

    if (out == NULL || n == 0 || salute == NULL || name == NULL)
        return -1;
    len = strlen(name);
    if (len > GREET_MAX_NAME)
        len = GREET_MAX_NAME;
    memcpy(kept, name, len);
    kept[len] = '\0';
    if (upper) {
        for (size_t i = 0; i < len; i++)
            if (kept[i] >= 'a' && kept[i] <= 'z')
                kept[i] = (char)(kept[i] - 'a' + 'A');
    }
    written = snprintf(out, n, "%s, %s!", salute, kept);
    if (written < 0)
        return -1;
    return (size_t)written < n ? written : (int)(n - 1);
}
