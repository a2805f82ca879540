// SPDX-License-Identifier: MIT
#include "version.h"

#include <stdio.h>

#include "rblk_proto.h"

#ifndef RBLK_VERSION
#error "RBLK_VERSION comes from the Makefile (debian/changelog)"
#endif


const char *rblk_version(void)
{
	return RBLK_VERSION;
}

void rblk_print_version(const char *prog)
{
	printf("%s %s (protocol %d)\n", prog, rblk_version(), RBLK_PROTO_VERSION);
}
