// Backend (graph) API descriptors of the simulated cuDNN: a typed bag of attributes, as
// cudnnBackendSetAttribute stores them, plus what finalization derives. backend_api.cpp implements
// the entry points on it, backend_execute.cpp the engines.
#pragma once

#include <cudnn.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

namespace tbdsim::dnn {

struct BackendDescriptor {
    static constexpr uint32_t kMagic = 0x7462646eu;
    uint32_t magic = kMagic;
    cudnnBackendDescriptorType_t type{};
    bool finalized = false;
    struct Value {
        cudnnBackendAttributeType_t type{};
        int64_t count = 0;
        std::vector<unsigned char> bytes;
    };
    std::map<int, Value> values;
    // Derived when finalized: engines (index), engine configs and plans (workspace).
    int64_t workspace_bytes = 0;
    // Engine descriptors of engine configs a heuristic filled (the config owns them).
    std::vector<std::shared_ptr<BackendDescriptor>> owned;
    // Execution plans: what execution needs, copied at finalization (frontends may destroy the graph).
    std::shared_ptr<const struct PlanSnapshot> snapshot;

    const Value* find(cudnnBackendAttributeName_t name) const {
        auto it = values.find(name);
        return it == values.end() ? nullptr : &it->second;
    }
    bool has(cudnnBackendAttributeName_t name) const { return find(name) != nullptr; }
    template <typename T>
    T scalar(cudnnBackendAttributeName_t name, T fallback = T{}) const {
        const Value* v = find(name);
        if (v == nullptr || v->count < 1 || v->bytes.size() < sizeof(T)) return fallback;
        T out;
        std::memcpy(&out, v->bytes.data(), sizeof(T));
        return out;
    }
    template <typename T>
    std::vector<T> array(cudnnBackendAttributeName_t name) const {
        const Value* v = find(name);
        std::vector<T> out;
        if (v == nullptr) return out;
        out.resize(static_cast<size_t>(v->count));
        std::memcpy(out.data(), v->bytes.data(), std::min(v->bytes.size(), out.size() * sizeof(T)));
        return out;
    }
    // A descriptor-typed attribute's first element.
    BackendDescriptor* descriptor(cudnnBackendAttributeName_t name) const {
        return static_cast<BackendDescriptor*>(scalar<void*>(name, nullptr));
    }
};

// Null unless `pointer` is a live descriptor of ours.
BackendDescriptor* backend_descriptor(void* pointer);

std::size_t attribute_element_bytes(cudnnBackendAttributeType_t type);

// Finalization and execution of the operation-level descriptors (backend_execute.cpp).
cudnnStatus_t finalize_descriptor(BackendDescriptor& d);
// Fills up to `requested` engine configs for the heuristic's graph, best first.
cudnnStatus_t heuristic_results(BackendDescriptor& heuristic, int64_t requested, int64_t* returned, void** configs);
cudnnStatus_t execute_plan(cudnnHandle_t handle, const BackendDescriptor& plan, const BackendDescriptor& pack);

// TBDSIM_CUDNN_BACKEND_LOG=1: prints the graph's operations and their attributes to stderr (backend_log.cpp).
void log_graph_if_asked(const BackendDescriptor& graph);

}  // namespace tbdsim::dnn
