#!/bin/bash
# SPDX-License-Identifier: MIT
# VM suite: the RDMA transport on Soft-RoCE (rdma_rxe).  One VM boot: fio
# verify over RDMA (both backends, 512 B..1 MiB, 4 jobs), restart keeps data,
# one volume over TCP and RDMA at once, hostile initiators (bad private
# data, bad capsules, transfers naming memory outside the registered range),
# and 200 connect/disconnect cycles without leaked QPs/MRs/fds.
# Cases: tests/vm/guest/suite-rdma.guest.sh.
. "$(dirname "$0")/host-lib.sh"
vm_require_build rblk-target rblk-fio.so tests/tools/rdma_probe
vm_suite rdma -t 900
