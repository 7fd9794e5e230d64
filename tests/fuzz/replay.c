/*
 * replay.c - main() for a fuzz target built without libFuzzer: runs
 * LLVMFuzzerTestOneInput once on every file named, or on every file in every
 * directory named, so the default test suite exercises each harness on its
 * corpus with any compiler.  Exits non-zero if no input was found; a failed
 * oracle aborts inside the harness.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    size_t cap = 4096, len = 0, r;
    uint8_t *buf = malloc(cap);
    while (buf && (r = fread(buf + len, 1, cap - len, f)) > 0) {
        len += r;
        if (len == cap)
            buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    if (!buf) {
        fprintf(stderr, "%s: out of memory\n", path);
        return -1;
    }
    /* An exact-sized copy, as libFuzzer passes it, so overreads are caught. */
    uint8_t *in = malloc(len ? len : 1);
    memcpy(in, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(in, len);
    free(in);
    return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
    long n = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st)) {
            perror(argv[i]);
            return 2;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (run_file(argv[i]))
                return 2;
            n++;
            continue;
        }
        struct dirent **ents;
        int k = scandir(argv[i], &ents, NULL, by_name);
        if (k < 0) {
            perror(argv[i]);
            return 2;
        }
        for (int j = 0; j < k; j++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], ents[j]->d_name);
            if (ents[j]->d_name[0] != '.' && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
                if (run_file(path))
                    return 2;
                n++;
            }
            free(ents[j]);
        }
        free(ents);
    }
    printf("replayed %ld input(s)\n", n);
    return n > 0 ? 0 : 1;
}
