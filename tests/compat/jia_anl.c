/*
 * jia_anl.c - a JIAJIA program written with the Argonne macros its header
 * carries (LOCKDEC/LOCKINIT/LOCK, ALOCK*, BARRIER, G_MALLOC, CLOCK), plus
 * the calls JIAJIA programs make around their work (jia_alloc1,
 * jia_startstat/jia_stopstat, jia_config, write-notice hints): two
 * lock-protected counters and an array of locked slots, checked exactly.
 * Prints "OK jia_anl" from process 0.
 */
#include <jia.h>
#include <setting.h> /* as JIAJIA's samples include it */

#include <stdio.h>

#define K     50
#define SLOTS 8

LOCKDEC(count_lock)
ALOCKDEC(slot_locks, SLOTS)
BARDEC(bar)

static void check(const char *what, long i, long want, long got)
{
    if (want != got)
        jia_error("jia_anl: %s[%ld]: expected %ld, got %ld", what, i, want, got);
}

int main(int argc, char **argv)
{
    float t0, t1;
    jia_init(argc, argv);
    LOCKINIT(count_lock)
    ALOCKINIT(slot_locks, SLOTS)
    BARINIT(bar)
    jia_config(HMIG, ON);
    jia_startstat();
    CLOCK(t0)
    long *count = (long *)G_MALLOC(2 * sizeof(long)) long *slot = (long *)jia_alloc1(SLOTS * sizeof(long));
    BARRIER(bar, jiahosts)
    for (int k = 0; k < K; k++) {
        LOCK(count_lock)
        count[0] += 1;
        count[1] += jiapid;
        UNLOCK(count_lock)
        ALOCK(slot_locks, k % SLOTS)
        slot[k % SLOTS] += 1;
        jia_wtnt(&slot[k % SLOTS], sizeof(long));
        AULOCK(slot_locks, k % SLOTS)
    }
    BARRIER(bar, jiahosts)
    CLOCK(t1)
    jia_stopstat();
    check("count", 0, (long)jiahosts * K, count[0]);
    check("count", 1, (long)K * jiahosts * (jiahosts - 1) / 2, count[1]);
    for (int s = 0; s < SLOTS; s++)
        check("slot", s, (long)jiahosts * (K / SLOTS + (s < K % SLOTS)), slot[s]);
    check("CLOCK moves forward", 0, 1, t1 >= t0);
    if (jiapid == 0) {
        printf("OK jia_anl\n");
        fflush(stdout);
    }
    jia_exit();
}
