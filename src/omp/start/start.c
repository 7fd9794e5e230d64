/*
 * start.c - the one piece of libsdsm-omp linked into the executable itself
 * (libsdsm-omp-start.a).  sdsmcc links with --wrap=main, so the C start-up
 * code calls __wrap_main, and only an object of the executable can reach
 * the program's own main (as __real_main).  Everything else lives in
 * libsdsm-omp.so, whose own variables stay private to each process while
 * the executable's data becomes shared memory.
 */
int __real_main(int argc, char **argv, char **envp);
int __wrap_main(int argc, char **argv, char **envp);
int sdsm_omp_main(int argc, char **argv, char **envp, int (*real_main)(int, char **, char **));

int __wrap_main(int argc, char **argv, char **envp) { return sdsm_omp_main(argc, argv, envp, __real_main); }
