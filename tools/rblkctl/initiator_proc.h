/* SPDX-License-Identifier: MIT */
/*
 * One rblk-initiator process as rblkctl starts it (initiator_proc.c):
 * its binary, its command line, its ready line, its device node.
 */
#ifndef RBLK_TOOLS_RBLKCTL_INITIATOR_PROC_H
#define RBLK_TOOLS_RBLKCTL_INITIATOR_PROC_H

#include <sys/types.h>
#include <stddef.h>
#include <stdio.h>

struct ini_state;

#define CTL_ATTACH_TIMEOUT_S	60
#define CTL_ARGV_MAX		64

/* An argv for rblk-initiator whose strings live in the struct. */
struct ctl_argv {
	const char *v[CTL_ARGV_MAX];
	int n;
	char pool[4096];
	size_t used;
};
void ctl_argv_init(struct ctl_argv *a);
/* Appends one printf-formatted argument; 0 or -E2BIG. */
int ctl_argv_add(struct ctl_argv *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Appends "opt val" unless val is NULL; 0 or -E2BIG. */
int ctl_argv_add_opt(struct ctl_argv *a, const char *opt, const char *val);
/* The command line that takes device s->dev_id over (--recover), with the
 * options it was attached with.  0 or -E2BIG. */
int ctl_argv_from_state(const struct ini_state *s, struct ctl_argv *a);

/* rblk-initiator next to this rblkctl, else $RBLK_INITIATOR, else PATH. */
void ctl_find_initiator(char *buf, size_t len);
/* "/dev/ublkb3", "ublkb3" or "3" -> 3; -1 when it is none of those. */
int ctl_parse_dev(const char *s);
/*
 * The arguments of a command on one device, DEVICE [--timeout SECS]
 * [--help]: -1 to go on (*id and *timeout_s set; the timeout's default is
 * CTL_ATTACH_TIMEOUT_S), else the exit status (0 after --help, 2 for a
 * usage error, said on stderr).
 */
int ctl_dev_args(int argc, char **argv, const char *cmd, void (*usage)(FILE *),
		 int *id, int *timeout_s);
/* Reads device id's state file into s: 0, or -1 after saying on stderr
 * that rblk did not attach it. */
int ctl_attached(int id, const char *cmd, struct ini_state *s);
/* 0 as root; else prints that "rblkctl CMD" must be run as root, -EPERM. */
int ctl_need_root(const char *cmd);
/* Whether /dev/ublkbN is a block device node now. */
int ctl_blk_exists(int id);
/* Reads the server's "OK ublkbN" / "ERR reason" line from fd for up to
 * timeout_s (then SIGTERMs child): N, or -1 with the reason in msg. */
int ctl_wait_ready(int fd, pid_t child, int timeout_s, char *msg, size_t msglen);

#endif /* RBLK_TOOLS_RBLKCTL_INITIATOR_PROC_H */
