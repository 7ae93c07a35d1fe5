/* A deterministic stand-in for Ctrl-C: a stream that raises the library's stop request on a chosen write. */
#ifndef TG_TEST_STOP_HOOK_H
#define TG_TEST_STOP_HOOK_H

#include <stdio.h>

/* An unbuffered stream (each fprintf one write) that calls tg_stop_request on the nth write whose text holds needle,
 * so a run given it as its log or progress stream stops after that step. One such stream at a time; fclose it. */
FILE *tg_test_stop_stream(const char *needle, int nth);

#endif
