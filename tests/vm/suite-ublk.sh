#!/bin/bash
# SPDX-License-Identifier: MIT
# VM suite: rblk volumes as /dev/ublkbN through rblk-initiator and rblkctl
# (attach/detach/list, file systems, fio verify, discard, durability, detach
# under load).  One VM boot; cases: tests/vm/guest/suite-ublk.guest.sh.
. "$(dirname "$0")/host-lib.sh"
vm_require_build rblk-target rblk-initiator rblkctl
vm_suite ublk -t 1800
