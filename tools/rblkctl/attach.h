/* SPDX-License-Identifier: MIT */
/*
 * rblkctl client-side commands (attach.c).  Each takes the command's own
 * argv (argv[0] is the command name) and returns the process exit status:
 * 0 ok, 1 failure (one line on stderr), 2 usage error.
 */
#ifndef RBLK_TOOLS_RBLKCTL_ATTACH_H
#define RBLK_TOOLS_RBLKCTL_ATTACH_H

#include <sys/types.h>

int rblkctl_attach(int argc, char **argv);
int rblkctl_detach(int argc, char **argv);
int rblkctl_list(int argc, char **argv);
int rblkctl_recover(int argc, char **argv);

/* ---- shared by attach.c and recover.c ---- */

#include <stddef.h>

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

/*
 * Starts rblk-initiator with a (in its own session, output appended to
 * logpath, or a new rblk-initiator.PID.log when NULL/""), under a
 * supervisor when supervised, and waits up to timeout_s for the device.
 * Returns N of /dev/ublkbN, or -1 with the reason in msg.
 */
int ctl_start(struct ctl_argv *a, int supervised, const char *logpath,
	      int timeout_s, char *msg, size_t len);

/*
 * Becomes the supervisor of a new rblk-initiator started with a: reports
 * "OK ublkbN"/"ERR reason" on report_fd (or, when it is -1, prints
 * /dev/ublkbN on stdout or the reason on stderr, as attach does), then
 * waits for the server; after a crash, with auto_recover, starts
 * `rblk-initiator --recover N` servers until one takes over, else exits 1.
 * SIGTERM is passed on to the server.  Never returns.
 */
void ctl_supervise(struct ctl_argv *a, const char *bin, const char *logpath,
		   int report_fd, int auto_recover) __attribute__((noreturn));

void ctl_find_initiator(char *buf, size_t len);
int ctl_parse_dev(const char *s);
int ctl_need_root(const char *cmd);
int ctl_blk_exists(int id);
int ctl_wait_ready(int fd, pid_t child, int timeout_s, char *msg, size_t msglen);

#endif /* RBLK_TOOLS_RBLKCTL_ATTACH_H */
