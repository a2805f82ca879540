/* SPDX-License-Identifier: MIT */
/*
 * Taking over a ublk device whose server died (UBLK_F_USER_RECOVERY):
 * the kernel-side checks and START_USER_RECOVERY.  The caller then opens
 * /dev/ublkcN, maps and fetches every tag as at start-up, and sends
 * END_USER_RECOVERY instead of START_DEV.
 */
#ifndef RBLK_INITIATOR_RECOVER_H
#define RBLK_INITIATOR_RECOVER_H

#include <stddef.h>
#include <stdint.h>

#include "ublk_ctrl.h"

/* rblk-initiator --recover exits with this when there is nothing to take
 * over (no such device, made without recovery, served by a live process):
 * a supervisor stops trying. */
#define INI_EXIT_NOTHING_TO_RECOVER	3
/* rblk-initiator exits with this after handing its device over (SIGUSR2,
 * rblkctl restart): the device waits, QUIESCED, for the next server. */
#define INI_EXIT_HANDED_OVER		4

/*
 * Waits up to timeout_ms for dev_id to be QUIESCED (a server that was just
 * killed leaves it LIVE for some milliseconds), then fills *info.  Returns
 * 0; -ENODEV no such device; -EOPNOTSUPP made without USER_RECOVERY;
 * -EBUSY served by a live process; -ETIMEDOUT not quiesced in time; or
 * another -errno.  why gets one line for any failure.  Changes nothing.
 */
int ini_recover_check(struct ini_ctrl *c, uint32_t dev_id, int timeout_ms,
		      struct ublksrv_ctrl_dev_info *info, char *why, size_t len);

/*
 * START_USER_RECOVERY, retried while the kernel answers -EBUSY (the dead
 * server's files are still being released) for up to timeout_ms.
 * 0 or -errno.
 */
int ini_recover_start(struct ini_ctrl *c, uint32_t dev_id, int timeout_ms);

/* "dead", "live", "quiesced" or "unknown" for a UBLK_S_DEV_* value. */
const char *ini_ublk_state_str(uint16_t state);

#endif /* RBLK_INITIATOR_RECOVER_H */
