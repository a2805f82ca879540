/* SPDX-License-Identifier: MIT */
/*
 * getopt_long without abbreviations.  glibc takes any unique prefix of a
 * long option ("--forc" for "--force"), so a prefix that is unique today
 * silently changes meaning when an option is added.  rblk's programs
 * accept only whole names.
 */
#ifndef RBLK_PROTO_GETOPT_EXACT_H
#define RBLK_PROTO_GETOPT_EXACT_H

#include <getopt.h>

/*
 * getopt_long(3), but a long option spelled shorter than its name is
 * refused: one line on stderr ("PROG: unknown option '--forc' (options
 * are not abbreviated: --force)") and '?' returned, as getopt does for an
 * unknown option.
 */
int rblk_getopt_long(int argc, char *const argv[], const char *shortopts,
		     const struct option *longopts, int *longindex);

#endif /* RBLK_PROTO_GETOPT_EXACT_H */
