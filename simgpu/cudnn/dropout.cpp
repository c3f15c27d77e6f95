// Dropout (cudnn_ops_v9.h): the descriptor with its random-number states, the reserve space that
// carries the keep mask from forward to backward, and the forward and backward passes. Sizes are
// this simulator's model (docs/simgpu-cudnn.md), not measured on real cuDNN: the states hold one
// 32-byte counter-based generator state per resident thread of the device (SMs x 2048), the reserve
// space one mask byte per element, rounded up to 16 bytes. Setting the descriptor with states
// initialises them with one kernel on the handle's stream, as cuDNN documents; restoring does not.
#include <new>

#include "dnn_state.h"

using namespace tbdsim;

#define TBD_EXPORT extern "C" __attribute__((visibility("default")))

struct cudnnDropoutStruct {
    float dropout = 0;
    void* states = nullptr;
    size_t states_bytes = 0;
    unsigned long long seed = 0;
    bool set = false;
};

namespace {

constexpr size_t kStateBytesPerThread = 32;
constexpr size_t kResidentThreadsPerSm = 2048;
constexpr size_t kReserveAlignment = 16;

size_t states_size(cudnnHandle_t handle) {
    return static_cast<size_t>(handle->sm_count) * kResidentThreadsPerSm * kStateBytesPerThread;
}

size_t reserve_size(const cudnnTensorStruct& x) {
    const auto mask = static_cast<size_t>(dnn::element_count(x));
    return (mask + kReserveAlignment - 1) / kReserveAlignment * kReserveAlignment;
}

cudnnStatus_t set_dropout(cudnnDropoutDescriptor_t d, float dropout, void* states, size_t states_bytes,
                          unsigned long long seed) {
    if (d == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (!(dropout >= 0.0f && dropout < 1.0f)) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "dropout: rate not in [0, 1)");
    *d = {dropout, states, states_bytes, seed, true};
    return CUDNN_STATUS_SUCCESS;
}

// Forward reads x and writes y and the mask; backward reads dy and the mask and writes dx.
cudnnStatus_t dropout_pass(cudnnHandle_t handle, const cudnnDropoutStruct* d, bool backward,
                           const cudnnTensorStruct* in_desc, const void* in, const cudnnTensorStruct* out_desc,
                           void* out, void* reserve, size_t reserve_bytes) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (d == nullptr || !d->set) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "dropout: descriptor not set");
    if (d->states == nullptr) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "dropout: states not initialised");
    if (in == nullptr || out == nullptr || reserve == nullptr) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "dropout: null pointer argument");
    }
    if (!dnn::same_dims(in_desc, out_desc) || in_desc->type != out_desc->type) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "dropout: input and output shapes or types differ");
    }
    const size_t mask = reserve_size(*in_desc);
    if (reserve_bytes < mask) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "dropout: reserve space too small");
    dnn::Elementwise work;
    work.kernel = backward ? dnn::kDropoutBackward : dnn::kDropoutForward;
    work.out = out_desc;
    work.flops = dnn::dropout_flops(backward, dnn::element_count(*out_desc));
    work.bytes = 2 * dnn::tensor_bytes(*out_desc) + static_cast<double>(mask);
    work.params = {in, backward ? reserve : d->states, out, reserve, reserve_bytes, 0, d->dropout, 0, 0, 0, nullptr,
                   {}};
    return dnn::run_elementwise(handle, work);
}

}  // namespace

TBD_EXPORT cudnnStatus_t cudnnCreateDropoutDescriptor(cudnnDropoutDescriptor_t* d) {
    if (d == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    *d = new (std::nothrow) cudnnDropoutStruct;
    return *d != nullptr ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
}

TBD_EXPORT cudnnStatus_t cudnnDestroyDropoutDescriptor(cudnnDropoutDescriptor_t d) {
    delete d;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnDropoutGetStatesSize(cudnnHandle_t handle, size_t* size) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (size == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    *size = states_size(handle);
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnDropoutGetReserveSpaceSize(cudnnTensorDescriptor_t x, size_t* size) {
    if (x == nullptr || size == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (!x->set) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "dropout: tensor descriptor not set");
    *size = reserve_size(*x);
    return CUDNN_STATUS_SUCCESS;
}

// With states: checks their size and initialises them from the seed (one kernel writing them all).
// Without: only the rate changes, the states stay as they were (cuDNN's documented shortcut).
TBD_EXPORT cudnnStatus_t cudnnSetDropoutDescriptor(cudnnDropoutDescriptor_t d, cudnnHandle_t handle, float dropout,
                                                   void* states, size_t states_bytes, unsigned long long seed) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (states == nullptr && d != nullptr && d->set) {
        return set_dropout(d, dropout, d->states, d->states_bytes, d->seed);
    }
    if (states != nullptr && states_bytes < states_size(handle)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "dropout: states smaller than cudnnDropoutGetStatesSize");
    }
    if (const cudnnStatus_t s = set_dropout(d, dropout, states, states_bytes, seed); s != CUDNN_STATUS_SUCCESS) {
        return s;
    }
    if (states == nullptr) return CUDNN_STATUS_SUCCESS;
    cudnnTensorStruct state_words;  // the states as a tensor of bytes, for the launch shape
    state_words.type = CUDNN_DATA_INT8;
    state_words.dims = 1;
    state_words.dim[0] = static_cast<int>(states_bytes / kStateBytesPerThread);
    state_words.set = true;
    dnn::Elementwise work;
    work.kernel = dnn::kDropoutInit;
    work.out = &state_words;
    work.bytes = static_cast<double>(states_size(handle));
    work.params = {nullptr, nullptr, states, nullptr, 0, 0, static_cast<double>(seed), 0, 0, 0, nullptr, {}};
    work.grid_x = static_cast<unsigned>(handle->sm_count) * 8;
    return dnn::run_elementwise(handle, work);
}

TBD_EXPORT cudnnStatus_t cudnnRestoreDropoutDescriptor(cudnnDropoutDescriptor_t d, cudnnHandle_t handle, float dropout,
                                                       void* states, size_t states_bytes, unsigned long long seed) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (states == nullptr) return dnn::fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "dropout: restore without states");
    if (states_bytes < states_size(handle)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "dropout: states smaller than cudnnDropoutGetStatesSize");
    }
    return set_dropout(d, dropout, states, states_bytes, seed);
}

TBD_EXPORT cudnnStatus_t cudnnGetDropoutDescriptor(cudnnDropoutDescriptor_t d, cudnnHandle_t handle, float* dropout,
                                                   void** states, unsigned long long* seed) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (d == nullptr || dropout == nullptr || states == nullptr || seed == nullptr) {
        return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    }
    if (!d->set) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "dropout: descriptor not set");
    *dropout = d->dropout;
    *states = d->states;
    *seed = d->seed;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnDropoutForward(cudnnHandle_t handle, const cudnnDropoutDescriptor_t d,
                                             const cudnnTensorDescriptor_t x_desc, const void* x,
                                             const cudnnTensorDescriptor_t y_desc, void* y, void* reserve,
                                             size_t reserve_bytes) {
    return dropout_pass(handle, d, false, x_desc, x, y_desc, y, reserve, reserve_bytes);
}

TBD_EXPORT cudnnStatus_t cudnnDropoutBackward(cudnnHandle_t handle, const cudnnDropoutDescriptor_t d,
                                              const cudnnTensorDescriptor_t dy_desc, const void* dy,
                                              const cudnnTensorDescriptor_t dx_desc, void* dx, void* reserve,
                                              size_t reserve_bytes) {
    return dropout_pass(handle, d, true, dy_desc, dy, dx_desc, dx, reserve, reserve_bytes);
}
