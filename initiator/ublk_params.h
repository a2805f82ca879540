/* SPDX-License-Identifier: MIT */
/*
 * Turning what the target granted at LOGIN (struct rblk_volume_info) into
 * the ublk device description: dev_info sizing and SET_PARAMS contents.
 * Pure functions, no kernel involved, so they are unit tested on the host.
 */
#ifndef RBLK_INITIATOR_UBLK_PARAMS_H
#define RBLK_INITIATOR_UBLK_PARAMS_H

#include <stdint.h>

#include "ublk_compat.h"
#include "rblk_client.h"

/* Largest per-tag buffer we ask ublk for (the protocol's max I/O). */
#define INI_UBLK_MAX_IO_BUF	RBLK_MAX_IO_SIZE

/*
 * Checks that a volume can be shown as a ublk device: block size 512..4096
 * and a power of two, size a non-zero multiple of it, max_io at least one
 * page.  Returns 0 or -EINVAL with a one-line reason in why (may be NULL).
 */
int ini_ublk_check_volume(const struct rblk_volume_info *vi,
			  char *why, size_t whylen);

/*
 * Per-tag buffer size to request in ADD_DEV (max_io_buf_bytes): the
 * volume's max_io capped at INI_UBLK_MAX_IO_BUF, rounded down to a page.
 */
uint32_t ini_ublk_io_buf_bytes(const struct rblk_volume_info *vi);

/*
 * Fills *p for SET_PARAMS from the volume and the max_io_buf_bytes the
 * kernel granted in ADD_DEV.  Discard/write-zeroes limits only when the
 * volume flags say the target can do them; volatile cache when it does
 * FLUSH, FUA on top when it does FUA.  Returns 0 or -EINVAL (volume
 * unusable, see ini_ublk_check_volume, or buf_bytes below one block).
 */
int ini_ublk_build_params(const struct rblk_volume_info *vi,
			  uint32_t buf_bytes, struct ublk_params *p);

#endif /* RBLK_INITIATOR_UBLK_PARAMS_H */
