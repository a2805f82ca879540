/* SPDX-License-Identifier: MIT */
/*
 * Starting a device's server, under a supervisor or not (supervise.c):
 * the one daemon that lives inside rblkctl.
 */
#ifndef RBLK_TOOLS_RBLKCTL_SUPERVISE_H
#define RBLK_TOOLS_RBLKCTL_SUPERVISE_H

#include "initiator_proc.h"

/*
 * Starts rblk-initiator with a (in its own session, output appended to
 * logpath, or a new rblk-initiator.PID.log when NULL/""), under a
 * supervisor when supervised, and waits up to timeout_s for the device.
 * Returns N of /dev/ublkbN, or -1 with the reason in msg.
 */
int ctl_start(struct ctl_argv *a, int supervised, const char *logpath,
	      int timeout_s, char *msg, size_t len);

/*
 * Starts the server that takes device id over (rblk-initiator --recover
 * N, with the options of its state file s, supervised when s says auto)
 * once the kernel says the device waits for one (within 3 s), and prints
 * /dev/ublkbN.  The exit status of rblkctl cmd (one line on stderr for 1).
 */
int ctl_recover_start(int id, const struct ini_state *s, int timeout_s,
		      const char *cmd);

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

#endif /* RBLK_TOOLS_RBLKCTL_SUPERVISE_H */
