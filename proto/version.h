/* SPDX-License-Identifier: MIT */
/*
 * The release version every binary prints for --version.  It is written
 * once, in debian/changelog; the Makefile passes it to version.c only, so
 * a new version rebuilds one object.
 */
#ifndef RBLK_PROTO_VERSION_H
#define RBLK_PROTO_VERSION_H

/* "0.1.0-1", or "0.1.0-1 (git 4debe4c-dirty)" when built in a checkout. */
const char *rblk_version(void);

/* Prints "PROG VERSION (protocol N)" on stdout: the --version answer. */
void rblk_print_version(const char *prog);

#endif /* RBLK_PROTO_VERSION_H */
