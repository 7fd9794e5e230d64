/*
 * app_sdsm.h - helpers the sdsm versions of the applications share (linked
 * only into them: the other versions do not link the sdsm library).
 */
#ifndef APP_SDSM_H
#define APP_SDSM_H

#include <stddef.h>

/*
 * Row pointers (malloc'ed, free() them) to an nrows x rowbytes matrix in
 * shared memory, distributed in blocks of rows (app_block): the rows
 * [lo, hi) of rank r are one allocation homed at r.  Collective: every rank
 * calls it with the same arguments, in the same order as its other
 * allocations.
 */
void *app_sdsm_rows(long nrows, size_t rowbytes);

#endif
