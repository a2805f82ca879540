/* SPDX-License-Identifier: MIT */
/*
 * systemd readiness notification (Type=notify): one datagram to the socket
 * named by $NOTIFY_SOCKET, no libsystemd.  Main thread only.
 */
#ifndef RBLK_TARGET_SDNOTIFY_H
#define RBLK_TARGET_SDNOTIFY_H

/*
 * Sends state (e.g. "READY=1", newline-separated assignments) to the
 * service manager.  Returns 1 when sent, 0 when not run by one
 * ($NOTIFY_SOCKET unset or empty), -errno on failure (the daemon goes on:
 * a failed notification is the manager's problem, not the data path's).
 */
int tgt_sd_notify(const char *state);

#endif /* RBLK_TARGET_SDNOTIFY_H */
