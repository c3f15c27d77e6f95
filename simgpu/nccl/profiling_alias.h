// NCCL exports every function twice: ncclX and pncclX (the name a profiling tool calls after it
// interposed on ncclX). A modelled function's p-name is an alias of it, defined at the end of the
// file that defines it (an alias must be in the same translation unit); the others are stubs.
#pragma once

#define TBDSIM_NCCL_PROFILING_ALIAS(name) \
    extern "C" __attribute__((visibility("default"))) decltype(name) p##name __attribute__((alias(#name)));
