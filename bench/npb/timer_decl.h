/*
 * timer_decl.h - forced into every file of the NPB builds (gcc's and
 * sdsmcc's alike) by bench/npb/run: the prototype of the suite's timer
 * read.  NPB 3.0's IS calls timer_read() without including the header that
 * declares it, so C's implicit declaration makes it return an int: IS
 * prints a garbage "Time in seconds".  With the prototype in scope the
 * benchmark's own timer (the ranked iterations only, without the
 * sequential key generation and the verification) is read as written.
 * Nothing of the suite's source is changed.
 */
#ifndef SDSM_BENCH_NPB_TIMER_DECL_H
#define SDSM_BENCH_NPB_TIMER_DECL_H
double timer_read(int n);
#endif
