// Stream memory operations: writes store their value in stream order; waits whose condition holds are
// ordering points; a wait that would need a later write is refused (not modelled).
#include "driver_test_support.h"

TEST_CASE("stream write and wait value operations, single and batched") {
    use_primary_context();
    CUdeviceptr flag = 0;
    CHECK_CU(cuMemAlloc(&flag, 64));
    CHECK_CU(cuMemsetD8(flag, 0, 64));
    CUstream stream = nullptr;
    CHECK_CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CHECK_CU(cuStreamWriteValue32(stream, flag, 7, 0));
    CHECK_CU(cuStreamWriteValue64(stream, flag + 8, 0x100000000ull, 0));
    CHECK_CU(cuStreamSynchronize(stream));
    cuuint32_t word = 0;
    cuuint64_t wide = 0;
    CHECK_CU(cuMemcpyDtoH(&word, flag, 4));
    CHECK_CU(cuMemcpyDtoH(&wide, flag + 8, 8));
    CHECK_EQ(word, 7u);
    CHECK_EQ(wide, 0x100000000ull);

    CHECK_CU(cuStreamWaitValue32(stream, flag, 7, CU_STREAM_WAIT_VALUE_EQ));
    CHECK_CU(cuStreamWaitValue32(stream, flag, 5, CU_STREAM_WAIT_VALUE_GEQ));
    CHECK_CU(cuStreamWaitValue32(stream, flag, 4, CU_STREAM_WAIT_VALUE_AND));
    CHECK_CU(cuStreamWaitValue64(stream, flag + 8, 0x100000000ull, CU_STREAM_WAIT_VALUE_EQ));
    CHECK_EQ(cuStreamWaitValue32(stream, flag, 8, CU_STREAM_WAIT_VALUE_EQ), CUDA_ERROR_NOT_SUPPORTED);
    CHECK_EQ(cuStreamWaitValue32(stream, flag + 2, 0, CU_STREAM_WAIT_VALUE_EQ), CUDA_ERROR_INVALID_VALUE);  // alignment
    CHECK_EQ(cuStreamWriteValue32(stream, 0x10, 1, 0), CUDA_ERROR_INVALID_VALUE);

    CUstreamBatchMemOpParams ops[3] = {};
    ops[0].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
    ops[0].writeValue.address = flag + 16;
    ops[0].writeValue.value = 42;
    ops[1].flushRemoteWrites.operation = CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES;
    ops[2].waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
    ops[2].waitValue.address = flag + 16;
    ops[2].waitValue.value = 42;
    ops[2].waitValue.flags = CU_STREAM_WAIT_VALUE_EQ;
    CHECK_CU(cuStreamBatchMemOp(stream, 3, ops, 0));
    CHECK_CU(cuStreamSynchronize(stream));
    CHECK_CU(cuMemcpyDtoH(&word, flag + 16, 4));
    CHECK_EQ(word, 42u);
    CHECK_CU(cuStreamDestroy(stream));
    CHECK_CU(cuMemFree(flag));
}
