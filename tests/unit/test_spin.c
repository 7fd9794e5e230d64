/*
 * test_spin.c - the poll hold of core/wait.h, driven directly (no launcher,
 * no transport): a poll that loses its CPU for a time slice stops the
 * rank's polling for a while, the hold doubles while losses keep coming and
 * halves once they stop, and the rank's next request is pinned while its
 * waits sleep at once (sdsm_spin_sleepy); a CPU lost to the job's own
 * threads holds nothing off.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "check.h"
#include "core/stats.h"
#include "core/wait.h"

#define MS 1000000ull

static uint64_t st(sdsm_stat_t s) { return atomic_load(&sdsm_stats.v[s]); }

static void reset(void)
{
    atomic_store(&sdsm_spin_held_until, 0);
    atomic_store(&sdsm_spin_hold_level, 0);
    atomic_store(&sdsm_spin_sleepy, 0);
    for (int i = 0; i < SDSM_SLEEP_BUCKETS; i++)
        atomic_store(&sdsm_spin_score[i], 0);
}

/* The hold's length from the policy alone, on made-up clock values. */
static void hold_grows_and_decays(void)
{
    reset();
    uint64_t t = 1000 * MS;
    sdsm_spin_hold(t);
    CHECK_I(atomic_load(&sdsm_spin_hold_level), ==, 0);
    CHECK_U(atomic_load(&sdsm_spin_held_until), ==, t + SDSM_SPIN_HOLD_NS);
    CHECK(sdsm_spin_held(t + SDSM_SPIN_HOLD_NS - 1));
    CHECK(!sdsm_spin_held(t + SDSM_SPIN_HOLD_NS));
    /* Losses one hold apart: the hold doubles each time, up to the top. */
    for (int k = 1; k <= SDSM_SPIN_HOLD_MAX + 2; k++) {
        t += SDSM_SPIN_HOLD_NS << (k - 1 < SDSM_SPIN_HOLD_MAX ? k - 1 : SDSM_SPIN_HOLD_MAX);
        sdsm_spin_hold(t);
        int want = k < SDSM_SPIN_HOLD_MAX ? k : SDSM_SPIN_HOLD_MAX;
        CHECK_I(atomic_load(&sdsm_spin_hold_level), ==, want);
        CHECK_U(atomic_load(&sdsm_spin_held_until), ==, t + (SDSM_SPIN_HOLD_NS << want));
    }
    /* A poll that kept its CPU soon after the last loss changes nothing... */
    sdsm_spin_kept(t + (SDSM_SPIN_HOLD_NS << SDSM_SPIN_HOLD_MAX));
    CHECK_I(atomic_load(&sdsm_spin_hold_level), ==, SDSM_SPIN_HOLD_MAX);
    /* ...one 4 holds after it halves the hold, and so on down to the start. */
    uint64_t u = t;
    for (int k = SDSM_SPIN_HOLD_MAX; k > 0; k--) {
        u += 4 * (SDSM_SPIN_HOLD_NS << k);
        sdsm_spin_kept(u);
        CHECK_I(atomic_load(&sdsm_spin_hold_level), ==, k - 1);
    }
    /* A lone loss long after starts again at the shortest hold. */
    sdsm_spin_hold(u + 1000 * MS);
    CHECK_I(atomic_load(&sdsm_spin_hold_level), ==, 0);
}

static _Atomic uint32_t word;

/* A poll round that takes 2 ms without serving anything: the poller lost
 * its CPU that long. */
static int slow_progress(void)
{
    nanosleep(&(struct timespec){0, 2 * MS}, NULL);
    return 0;
}

static int yes(uint64_t now)
{
    (void)now;
    return 1;
}
static int no(uint64_t now)
{
    (void)now;
    return 0;
}

static void *changer(void *arg)
{
    (void)arg;
    nanosleep(&(struct timespec){0, 30 * MS}, NULL);
    atomic_store(&word, 1);
    sdsm_wake_all(&word);
    return NULL;
}

/* One wait of up to 1 s of polling whose every poll round takes 2 ms
 * (lost its CPU), ended by changer after 30 ms; foreign stands in for the
 * kernel's answer to "another job?", hiding for the rank hiding latency.
 * Returns the polls held off for it (the statistic's growth); *took: how
 * long the wait took. */
static uint64_t lose_a_poll(int (*foreign)(uint64_t), int hiding, uint64_t *took)
{
    reset();
    sdsm_wait_ops.spin_foreign = foreign;
    atomic_store(&sdsm_wait_hiding, hiding);
    atomic_store(&word, 0);
    atomic_store(&sdsm_wait_spin_us, 1000000); /* a 1 s poll, unless cut short */
    int (*saved)(void) = sdsm_wait_ops.progress;
    sdsm_wait_ops.progress = slow_progress;
    uint64_t stolen0 = st(SDSM_ST_SPIN_STOLEN);
    pthread_t th;
    pthread_create(&th, NULL, changer, NULL);
    uint64_t t0 = sdsm_now_ns();
    uint32_t v = sdsm_wait_change_local(&word, 0, NULL);
    *took = sdsm_now_ns() - t0;
    pthread_join(th, NULL);
    CHECK_U(v, ==, 1);
    sdsm_wait_ops.progress = saved;
    atomic_store(&sdsm_wait_hiding, 0);
    return st(SDSM_ST_SPIN_STOLEN) - stolen0;
}

/* A real wait whose poll loses its CPU to another job: the poll ends at
 * once (not after SDSM_SPIN_US), the wait sleeps and is woken, polls are
 * held off and the next wait sleeps at once. */
static void lost_poll_holds(void)
{
    uint64_t took, skipped0 = st(SDSM_ST_SPIN_SKIPPED);
    CHECK_U(lose_a_poll(yes, 0, &took), ==, 1);
    CHECK_U(took, <, 900 * MS); /* woken by the change, not at the end of the poll */
    CHECK(sdsm_spin_held(sdsm_now_ns()) || took > 5 * MS);
    /* The next wait in the hold sleeps at once and marks the rank sleepy. */
    atomic_store(&sdsm_spin_held_until, sdsm_now_ns() + 1000 * MS);
    CHECK(!sdsm_spin_pays(&sdsm_spin_score[0], sdsm_now_ns()));
    CHECK_I(atomic_load(&sdsm_spin_sleepy), ==, 1);
    CHECK_U(st(SDSM_ST_SPIN_SKIPPED) - skipped0, ==, 1);
    /* Once the hold is over, a wait polls again and the rank is not sleepy. */
    atomic_store(&sdsm_spin_held_until, 0);
    CHECK(sdsm_spin_pays(&sdsm_spin_score[0], sdsm_now_ns()));
    CHECK_I(atomic_load(&sdsm_spin_sleepy), ==, 0);
}

/* The same lost poll where no other job is runnable (the job's own ranks
 * took the CPU): nothing is held off. */
static void own_job_no_hold(void)
{
    uint64_t took;
    CHECK_U(lose_a_poll(no, 0, &took), ==, 0);
    CHECK(!sdsm_spin_held(sdsm_now_ns()));
    CHECK_I(atomic_load(&sdsm_spin_hold_level), ==, 0);
}

/* Where the rank hides latency, a long poll round is its own compute
 * threads at work: no hold, even with another job about. */
static void hiding_no_hold(void)
{
    uint64_t took;
    CHECK_U(lose_a_poll(yes, 1, &took), ==, 0);
    CHECK(!sdsm_spin_held(sdsm_now_ns()));
}

int main(void)
{
    ck_run("hold grows and decays", hold_grows_and_decays);
    ck_run("a poll that loses its CPU holds polls off", lost_poll_holds);
    ck_run("not when the job's own threads took it", own_job_no_hold);
    ck_run("not where the rank hides latency", hiding_no_hold);
    return ck_done("spin");
}
