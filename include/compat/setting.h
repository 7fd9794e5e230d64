/*
 * setting.h - JIAJIA's sample programs include it after jia.h, but in
 * JIAJIA it is the system's internal configuration (its sizes and
 * switches), and the samples use nothing it declares.  It is shipped empty
 * so that they build unchanged; the interface they use is all in jia.h.
 */
#ifndef SDSM_COMPAT_SETTING_H
#define SDSM_COMPAT_SETTING_H
#endif
