// The backend API's entry points: create, initialize, set/get attributes, finalize, destroy, execute.
// Descriptor-typed attributes hold the caller's descriptors by reference (frontends keep them alive);
// reading one back copies the referenced descriptor into the one the caller passes (its type
// included, a leniency of ours: real cuDNN wants the caller's descriptor created with that type).
#include <cstring>
#include <mutex>
#include <new>
#include <unordered_set>

#include "backend_plan.h"
#include "backend_store.h"
#include "dnn_state.h"

using tbdsim::dnn::BackendDescriptor;

#define TBD_EXPORT extern "C" __attribute__((visibility("default")))

namespace tbdsim::dnn {
namespace {

std::mutex g_mutex;
std::unordered_set<void*>& live() {
    static std::unordered_set<void*> set;
    return set;
}

}  // namespace

BackendDescriptor* backend_descriptor(void* pointer) {
    std::lock_guard lock(g_mutex);
    return live().count(pointer) != 0 ? static_cast<BackendDescriptor*>(pointer) : nullptr;
}

std::size_t attribute_element_bytes(cudnnBackendAttributeType_t type) {
    switch (type) {
        case CUDNN_TYPE_HANDLE:
        case CUDNN_TYPE_VOID_PTR:
        case CUDNN_TYPE_BACKEND_DESCRIPTOR:
            return sizeof(void*);
        case CUDNN_TYPE_BOOLEAN:
            return sizeof(bool);
        case CUDNN_TYPE_INT64:
            return sizeof(int64_t);
        case CUDNN_TYPE_FLOAT:
            return sizeof(float);
        case CUDNN_TYPE_DOUBLE:
            return sizeof(double);
        case CUDNN_TYPE_CHAR:
            return 1;
        case CUDNN_TYPE_FRACTION:
            return sizeof(cudnnFraction_t);
        default:
            return 4;  // enums and INT32
    }
}

}  // namespace tbdsim::dnn

TBD_EXPORT cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type,
                                                      cudnnBackendDescriptor_t* descriptor) {
    if (descriptor == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    auto* created = new (std::nothrow) BackendDescriptor;
    if (created == nullptr) return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    created->type = type;
    {
        std::lock_guard lock(tbdsim::dnn::g_mutex);
        tbdsim::dnn::live().insert(created);
    }
    *descriptor = created;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t descriptor) {
    BackendDescriptor* d = tbdsim::dnn::backend_descriptor(descriptor);
    if (d == nullptr) return CUDNN_STATUS_BAD_PARAM;
    {
        std::lock_guard lock(tbdsim::dnn::g_mutex);
        tbdsim::dnn::live().erase(d);
    }
    delete d;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnBackendInitialize(cudnnBackendDescriptor_t descriptor) {
    BackendDescriptor* d = tbdsim::dnn::backend_descriptor(descriptor);
    if (d == nullptr) return CUDNN_STATUS_BAD_PARAM;
    d->values.clear();
    d->finalized = false;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t descriptor, cudnnBackendAttributeName_t name,
                                                  cudnnBackendAttributeType_t type, int64_t count,
                                                  const void* elements) {
    BackendDescriptor* d = tbdsim::dnn::backend_descriptor(descriptor);
    if (d == nullptr) return CUDNN_STATUS_BAD_PARAM;
    if (d->finalized) return tbdsim::dnn::fail(CUDNN_STATUS_BAD_PARAM, "backend: descriptor already finalized");
    if (count < 0 || (count > 0 && elements == nullptr)) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    BackendDescriptor::Value value;
    value.type = type;
    value.count = count;
    const std::size_t bytes = tbdsim::dnn::attribute_element_bytes(type) * static_cast<std::size_t>(count);
    value.bytes.assign(static_cast<const unsigned char*>(elements),
                       static_cast<const unsigned char*>(elements) + bytes);
    if (type == CUDNN_TYPE_BACKEND_DESCRIPTOR) {
        for (int64_t i = 0; i < count; ++i) {
            if (tbdsim::dnn::backend_descriptor(static_cast<void* const*>(elements)[i]) == nullptr) {
                return tbdsim::dnn::fail(CUDNN_STATUS_BAD_PARAM, "backend: not a backend descriptor");
            }
        }
    }
    d->values[name] = std::move(value);
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t descriptor) {
    BackendDescriptor* d = tbdsim::dnn::backend_descriptor(descriptor);
    if (d == nullptr) return CUDNN_STATUS_BAD_PARAM;
    if (d->finalized) return CUDNN_STATUS_SUCCESS;
    return tbdsim::dnn::finalize_descriptor(*d);
}

namespace {

// Derived attributes, answered on finalized descriptors.
bool derived(const BackendDescriptor& d, cudnnBackendAttributeName_t name, BackendDescriptor::Value* out) {
    auto set_int64 = [&](int64_t v) {
        out->type = CUDNN_TYPE_INT64;
        out->count = 1;
        out->bytes.resize(8);
        std::memcpy(out->bytes.data(), &v, 8);
        return true;
    };
    switch (name) {
        case CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE:
        case CUDNN_ATTR_ENGINECFG_WORKSPACE_SIZE:
            return set_int64(d.workspace_bytes);
        case CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT:
            return set_int64(2);
        case CUDNN_ATTR_ENGINE_NUMERICAL_NOTE: {
            out->type = CUDNN_TYPE_NUMERICAL_NOTE;
            // Engine 1 runs on tensor cores; attention (16-bit inputs) does on either engine.
            const bool attention =
                d.snapshot != nullptr && d.snapshot->kind != tbdsim::dnn::GraphKind::kMainWithEpilogue;
            const bool tensor_core = d.scalar<int64_t>(CUDNN_ATTR_ENGINE_GLOBAL_INDEX) == 1 || attention;
            out->count = tensor_core ? 1 : 0;
            const cudnnBackendNumericalNote_t note = CUDNN_NUMERICAL_NOTE_TENSOR_CORE;
            out->bytes.assign(reinterpret_cast<const unsigned char*>(&note),
                              reinterpret_cast<const unsigned char*>(&note) + (tensor_core ? sizeof(note) : 0));
            return true;
        }
        case CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE:  // no runtime compilation, no other behaviour to declare
            out->type = CUDNN_TYPE_BEHAVIOR_NOTE;
            out->count = 0;
            out->bytes.clear();
            return true;
        default:
            return false;
    }
}

}  // namespace

TBD_EXPORT cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const descriptor,
                                                  cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                                                  int64_t requested, int64_t* count, void* elements) {
    BackendDescriptor* d = tbdsim::dnn::backend_descriptor(descriptor);
    if (d == nullptr) return CUDNN_STATUS_BAD_PARAM;
    if (requested < 0) return CUDNN_STATUS_BAD_PARAM;
    // No array given: a count query, whatever `requested` says (the cudnn frontend's fetchNotes
    // asks so before reading the notes).
    if (elements == nullptr) {
        if (count == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
        requested = 0;
    }
    if (name == CUDNN_ATTR_ENGINEHEUR_RESULTS) {
        if (!d->finalized) return CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED;
        int64_t returned = 0;
        const cudnnStatus_t status =
            tbdsim::dnn::heuristic_results(*d, requested, &returned, static_cast<void**>(elements));
        if (count != nullptr) *count = returned;
        return status;
    }
    BackendDescriptor::Value computed;
    const BackendDescriptor::Value* value = nullptr;
    if (d->finalized && derived(*d, name, &computed)) {
        value = &computed;
    } else {
        value = d->find(name);
    }
    // An engine config nobody set knobs on has none (PyTorch's frontend reads them for its plan tags).
    const BackendDescriptor::Value no_knobs{CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, {}};
    if (value == nullptr && name == CUDNN_ATTR_ENGINECFG_KNOB_CHOICES) value = &no_knobs;
    if (value == nullptr) return tbdsim::dnn::fail(CUDNN_STATUS_BAD_PARAM, "backend: attribute not set");
    if (value->type != type) return CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE;
    if (count != nullptr) *count = value->count;
    const int64_t n = std::min(requested, value->count);
    if (type == CUDNN_TYPE_BACKEND_DESCRIPTOR) {
        for (int64_t i = 0; i < n; ++i) {
            BackendDescriptor* target = tbdsim::dnn::backend_descriptor(static_cast<void**>(elements)[i]);
            void* source_pointer = nullptr;
            std::memcpy(&source_pointer, value->bytes.data() + i * sizeof(void*), sizeof(void*));
            BackendDescriptor* source = tbdsim::dnn::backend_descriptor(source_pointer);
            if (target == nullptr || source == nullptr) return CUDNN_STATUS_BAD_PARAM;
            target->type = source->type;
            target->finalized = source->finalized;
            target->values = source->values;
            target->workspace_bytes = source->workspace_bytes;
            target->owned = source->owned;
            target->snapshot = source->snapshot;
        }
        return CUDNN_STATUS_SUCCESS;
    }
    std::memcpy(elements, value->bytes.data(),
                static_cast<std::size_t>(n) * tbdsim::dnn::attribute_element_bytes(type));
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnBackendExecute(cudnnHandle_t handle, cudnnBackendDescriptor_t plan,
                                             cudnnBackendDescriptor_t pack) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    BackendDescriptor* p = tbdsim::dnn::backend_descriptor(plan);
    BackendDescriptor* v = tbdsim::dnn::backend_descriptor(pack);
    if (p == nullptr || v == nullptr || p->type != CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR ||
        v->type != CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR) {
        return CUDNN_STATUS_BAD_PARAM;
    }
    if (!p->finalized || !v->finalized) return CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED;
    return tbdsim::dnn::execute_plan(handle, *p, *v);
}
