/* SPDX-License-Identifier: MIT */
/*
 * ublk control path: commands to /dev/ublk-control sent as io_uring
 * URING_CMDs on a small SQE128 ring.  One struct ini_ctrl is used by one
 * thread (the daemon's main thread); every call is synchronous and returns
 * 0 (or a value) or -errno from the kernel.
 */
#ifndef RBLK_INITIATOR_UBLK_CTRL_H
#define RBLK_INITIATOR_UBLK_CTRL_H

#include <sched.h>
#include <stdint.h>
#include <sys/types.h>

#include "ublk_compat.h"

#define INI_UBLK_CONTROL	"/dev/ublk-control"

struct ini_ctrl;

/*
 * Opens /dev/ublk-control and probes GET_FEATURES (a kernel without it
 * reports 0 features and gets the legacy opcodes).  -ENOENT when the
 * control device is missing (no ublk_drv), -EACCES when not permitted.
 */
int ini_ctrl_open(struct ini_ctrl **cp);
void ini_ctrl_close(struct ini_ctrl *c);

/* UBLK_F_* bits this kernel supports (0 if it cannot say). */
uint64_t ini_ctrl_features(const struct ini_ctrl *c);

/*
 * ADD_DEV.  info->dev_id = -1 asks for the next free id.  The kernel
 * rewrites *info (drops unknown flags, clamps queues and buffer size);
 * the caller must use the values it finds there afterwards.
 */
int ini_ctrl_add_dev(struct ini_ctrl *c, struct ublksrv_ctrl_dev_info *info);
int ini_ctrl_del_dev(struct ini_ctrl *c, uint32_t dev_id);
/* Blocks until every tag of every queue has been fetched. */
int ini_ctrl_start_dev(struct ini_ctrl *c, uint32_t dev_id, pid_t pid);
int ini_ctrl_stop_dev(struct ini_ctrl *c, uint32_t dev_id);
/* Sends the whole set: a failed SET_PARAMS clears what was set before. */
int ini_ctrl_set_params(struct ini_ctrl *c, uint32_t dev_id,
			const struct ublk_params *p);
int ini_ctrl_get_params(struct ini_ctrl *c, uint32_t dev_id,
			struct ublk_params *p);
int ini_ctrl_get_dev_info(struct ini_ctrl *c, uint32_t dev_id,
			  struct ublksrv_ctrl_dev_info *info);

/*
 * GET_QUEUE_AFFINITY: the CPUs whose requests blk-mq sends to queue q_id
 * of an added device (every ublk kernel has it).
 */
int ini_ctrl_queue_affinity(struct ini_ctrl *c, uint32_t dev_id, uint16_t q_id,
			    cpu_set_t *set);

/*
 * USER_RECOVERY: START is allowed once the device is QUIESCED and the dead
 * server's /dev/ublkcN is closed (-EBUSY before that: retry); the new
 * server then opens /dev/ublkcN, maps and FETCHes every tag, and END
 * (which blocks until every tag is fetched, like START_DEV) makes the
 * device LIVE with pid as its server.  SET_PARAMS is refused meanwhile.
 */
int ini_ctrl_start_recovery(struct ini_ctrl *c, uint32_t dev_id);
int ini_ctrl_end_recovery(struct ini_ctrl *c, uint32_t dev_id, pid_t pid);

/*
 * UPDATE_SIZE (UBLK_F_UPDATE_SIZE, 6.16+): a started device's capacity
 * becomes bytes (a multiple of 512), and the kernel tells udev.
 * -EOPNOTSUPP on a kernel without it.
 */
int ini_ctrl_update_size(struct ini_ctrl *c, uint32_t dev_id, uint64_t bytes);

/*
 * QUIESCE_DEV (UBLK_F_QUIESCE, 6.16+, a device made with it and
 * USER_RECOVERY): the kernel stops handing the device's server new
 * requests (they wait), waits up to timeout_ms (0: for ever) until every
 * queue has an idle tag, and completes the idle fetches with
 * UBLK_IO_RES_ABORT.  The server then answers what it holds and exits;
 * the device waits QUIESCED for the next one.  -EOPNOTSUPP without it,
 * -EBUSY when the wait timed out.
 */
int ini_ctrl_quiesce_dev(struct ini_ctrl *c, uint32_t dev_id, unsigned timeout_ms);

#endif /* RBLK_INITIATOR_UBLK_CTRL_H */
