/* Included by sdsmcc into every file it compiles: the marker that lets a
 * link tell objects built by sdsmcc (atomics as calls) from others. */
#ifndef SDSM_OMP_MARKER_H
#define SDSM_OMP_MARKER_H
__attribute__((used, section(".sdsm_omp"))) static const char sdsm_omp_built_[] = "sdsmcc";
#endif
