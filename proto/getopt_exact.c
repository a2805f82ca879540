// SPDX-License-Identifier: MIT
#include "getopt_exact.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int rblk_getopt_long(int argc, char *const argv[], const char *shortopts,
		     const struct option *longopts, int *longindex)
{
	const char *el, *name;
	int li = -1, c;
	size_t n;

	c = getopt_long(argc, argv, shortopts, longopts, &li);
	if (c == -1 || li < 0)
		return c;
	/*
	 * The element just taken: the one before optind, or the one before
	 * its argument when that came as the next element ("--size 1M";
	 * "--size=1M" has it inside).
	 */
	el = argv[optind - 1];
	if (optarg && optind >= 2 && optarg == argv[optind - 1])
		el = argv[optind - 2];
	if (strncmp(el, "--", 2))
		return c;
	name = longopts[li].name;
	n = strcspn(el + 2, "=");
	if (n != strlen(name)) {
		fprintf(stderr, "%s: unknown option '%.*s' (options are not abbreviated: --%s)\n",
			program_invocation_short_name, (int)(n + 2), el, name);
		return '?';
	}
	if (longindex)
		*longindex = li;
	return c;
}
