#!/bin/bash
# SPDX-License-Identifier: MIT
# VM suite: an RBD image as /dev/ublkbN over RDMA (Soft-RoCE), through
# rblk-target's rbd backend, on a one-node Ceph cluster started in the
# guest (tests/ceph/ceph-up).  One VM boot; cases:
# tests/vm/guest/suite-rbd.guest.sh.
. "$(dirname "$0")/host-lib.sh"
vm_require_build rblk-target rblk-initiator rblkctl
vm_suite rbd -t 1200
