/* The library's version. */
#ifndef TICKGRAD_VERSION_H
#define TICKGRAD_VERSION_H

#ifdef __cplusplus
extern "C" {
#endif

/* "0.1.0" */
const char *tg_version(void);

#ifdef __cplusplus
}
#endif
#endif
