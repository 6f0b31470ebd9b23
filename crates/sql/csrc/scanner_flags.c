/*
 * Setters for libpg_query's per-thread lexer switches.
 *
 * PostgreSQL's lexer reads standard_conforming_strings and
 * backslash_quote from globals that libpg_query made thread-local
 * (__thread); Rust cannot name a C thread-local, so these two functions
 * set them for the calling (session) thread before it parses.
 */
#include <stdbool.h>

extern __thread bool standard_conforming_strings;
extern __thread bool escape_string_warning;

void tusk_set_standard_conforming_strings(bool on)
{
	standard_conforming_strings = on;
}

void tusk_set_escape_string_warning(bool on)
{
	escape_string_warning = on;
}
