/*
 * pthread_start.c - linked into the executable by sdsmcc -pthread (which
 * names sdsm_omp_pthread_link, pulling this member out of
 * libsdsm-omp-start.a): before main, the runtime learns that the program's
 * pthread calls are its own (src/omp/pthread.c), so the compute threads wait
 * for the program's threads instead of OpenMP regions.
 */
void sdsm_omp_pthread_mode(void);
void sdsm_omp_pthread_link(void);

void sdsm_omp_pthread_link(void) {}

__attribute__((constructor)) static void pthread_program(void) { sdsm_omp_pthread_mode(); }
