// SPDX-License-Identifier: MIT
/* Kernel side of taking over a device after a server crash (recover.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "recover.h"
#include "state.h"

const char *ini_ublk_state_str(uint16_t state)
{
	switch (state) {
	case UBLK_S_DEV_DEAD:		return "dead";
	case UBLK_S_DEV_LIVE:		return "live";
	case UBLK_S_DEV_QUIESCED:	return "quiesced";
	default:			return "unknown";
	}
}

int ini_recover_check(struct ini_ctrl *c, uint32_t dev_id, int timeout_ms,
		      struct ublksrv_ctrl_dev_info *info, char *why, size_t len)
{
	int64_t deadline = rblk_now_ms() + timeout_ms;
	int ret;

	for (;;) {
		ret = ini_ctrl_get_dev_info(c, dev_id, info);
		if (ret == -ENODEV || ret == -ENOENT) {
			snprintf(why, len, "no ublk device %u in the kernel", dev_id);
			return -ENODEV;
		}
		if (ret) {
			snprintf(why, len, "ublk GET_DEV_INFO %u: %s", dev_id, strerror(-ret));
			return ret;
		}
		if (!(info->flags & UBLK_F_USER_RECOVERY)) {
			snprintf(why, len, "ublk device %u was made without recovery (--no-recovery): it cannot be taken over",
				 dev_id);
			return -EOPNOTSUPP;
		}
		if (info->state == UBLK_S_DEV_QUIESCED)
			return 0;
		if (info->state == UBLK_S_DEV_LIVE && ini_pid_alive(info->ublksrv_pid) &&
		    info->ublksrv_pid != getpid()) {
			snprintf(why, len, "ublk device %u is live, served by pid %d: nothing to recover",
				 dev_id, (int)info->ublksrv_pid);
			return -EBUSY;
		}
		if (rblk_now_ms() >= deadline) {
			snprintf(why, len, "ublk device %u is %s, not quiesced", dev_id,
				 ini_ublk_state_str(info->state));
			return -ETIMEDOUT;
		}
		usleep(50000);
	}
}

int ini_recover_start(struct ini_ctrl *c, uint32_t dev_id, int timeout_ms)
{
	int64_t deadline = rblk_now_ms() + timeout_ms;
	unsigned tries = 0;
	int ret;

	for (;;) {
		ret = ini_ctrl_start_recovery(c, dev_id);
		tries++;
		if (ret != -EBUSY || rblk_now_ms() >= deadline)
			break;
		usleep(50000);
	}
	RBLK_DBG(RBLK_DBG_UBLK, "START_USER_RECOVERY %u: %d after %u tries",
		 dev_id, ret, tries);
	return ret;
}
