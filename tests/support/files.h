/* File helpers shared by the tests. */
#ifndef TG_TEST_FILES_H
#define TG_TEST_FILES_H

#include <stddef.h>

/* The whole file, malloc'ed, with a NUL after the last byte (not counted in *len); NULL if it
 * cannot be read. */
unsigned char *tg_test_read_file(const char *path, size_t *len);

/* Removes path and everything under it (a test's scratch folder); prints a line when it cannot. */
void tg_test_remove_tree(const char *path);

#endif
