/* relit-internal.h — the literals every match of a regular expression
 * contains: the validators compile and run a rule's regular expression only
 * on text that holds one of them. Not installed. */
#ifndef WARD_RELIT_INTERNAL_H
#define WARD_RELIT_INTERNAL_H

#include <stddef.h>

/* Literals of the POSIX extended regular expression `re` (as regcomp(3)
 * takes it with REG_EXTENDED, without REG_ICASE) such that every string
 * regexec(3) matches holds at least one of them: *lits (malloc'd, with *n
 * malloc'd strings, none empty) on success. *n == 0 means no such literal is
 * known, and the expression must always be run: it can match text without
 * any fixed substring (`a*`, `.`), or uses a construct this analysis does
 * not follow (a byte outside ASCII, GNU escapes such as `\w` are followed as
 * "any text", an odd interval or parenthesis gives up). Sound, not
 * complete: the literals say where a match cannot be, never where one is.
 * Returns 0, or -1 with errno ENOMEM (nothing to free). */
int ward_re_literals(const char *re, char ***lits, size_t *n);

/* Free what ward_re_literals() made. */
void ward_re_literals_free(char **lits, size_t n);

#endif
