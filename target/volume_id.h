/* SPDX-License-Identifier: MIT */
/*
 * A volume's identity, reported in every LOGIN_RSP: a client with several
 * paths checks that they all reach the same volume.  The same store gives
 * the same UUID through any target (an RBD image: its cluster fsid, pool
 * id and image id); a local file or device is known to its own machine
 * only (machine-id and path), so two targets never claim one by mistake.
 */
#ifndef RBLK_TARGET_VOLUME_ID_H
#define RBLK_TARGET_VOLUME_ID_H

#include <stddef.h>
#include <stdint.h>

#include "rblk_proto.h"

/* The RFC 9562 version 8 (vendor-defined) UUID of key: SHA-256 of the
 * text, its first 16 bytes with the version and variant bits set. */
void tgt_uuid_from_key(uint8_t uuid[RBLK_UUID_LEN], const char *key);
/* A store this machine owns: "local/<machine-id>/<what>", what being the
 * store's absolute path (or the null backend's volume name). */
void tgt_uuid_local(uint8_t uuid[RBLK_UUID_LEN], const char *what);
/* As text: rblk_uuid_str (helpers.h). */

#endif /* RBLK_TARGET_VOLUME_ID_H */
