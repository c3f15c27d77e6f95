// The backend API's descriptor life cycle, followed so that cudnnBackendExecute can be recorded
// without reading the plan's graph back (its operation and graph descriptors may be destroyed by
// then: PyTorch's cudnn frontend does so). Each descriptor's type is kept at creation; the
// descriptor-typed links that build a plan are kept as they are set (a graph's operations, an
// engine's graph, a heuristic's graph, an engine config's engine, a plan's engine config) or handed
// out (the engine configs of a heuristic's results); at finalization each level copies the summary
// below it (operations read through the getters while they are alive, cudnn_backend_summary.cpp),
// and a plan keeps a PlanSummary until it is destroyed. cudnnBackendExecute then costs one lookup.
// A plan whose chain was not seen (descriptors made before the collector loaded) is read through
// the getters at its finalization instead.
#include <cudnn.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "cudnn_backend_summary.h"

namespace tbdprof::preload::cudnn_backend {
namespace {

struct Entry {
    cudnnBackendDescriptorType_t type{};
    std::vector<cudnnBackendDescriptor_t> links;  // the descriptor-typed attribute that builds the plan
    std::shared_ptr<const Operation> operation;   // operation descriptors
    std::shared_ptr<const Operations> graph;      // graphs, engines, engine configs, heuristics' configs
    std::shared_ptr<const PlanSummary> plan;      // plans
};

std::mutex mutex;
std::unordered_map<cudnnBackendDescriptor_t, Entry>& entries() {
    static auto* map = new std::unordered_map<cudnnBackendDescriptor_t, Entry>;  // outlives exit-time calls
    return *map;
}

bool is_operation(cudnnBackendDescriptorType_t type) {
    switch (type) {
        case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR:
        case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR:
        case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR:
        case CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR:
        case CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR:
        case CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR:
        case CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR:
        case CUDNN_BACKEND_OPERATION_RNG_DESCRIPTOR:
        case CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR:
        case CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR:
            return true;
        default:
            return false;
    }
}

// The descriptors followed: operations and the levels that build a plan. Tensors, variant packs
// (one per execution in PyTorch) and the rest get no entry.
bool followed(cudnnBackendDescriptorType_t type) {
    return is_operation(type) || type == CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR ||
           type == CUDNN_BACKEND_ENGINE_DESCRIPTOR || type == CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR ||
           type == CUDNN_BACKEND_ENGINECFG_DESCRIPTOR || type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR;
}

// Whether an attribute is one of the links kept (see the file comment).
bool is_link(cudnnBackendAttributeName_t name) {
    return name == CUDNN_ATTR_OPERATIONGRAPH_OPS || name == CUDNN_ATTR_ENGINE_OPERATION_GRAPH ||
           name == CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH || name == CUDNN_ATTR_ENGINECFG_ENGINE ||
           name == CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG;
}

// The operations below a linked descriptor (a graph, engine or engine config); null when unknown.
// Called with the mutex held.
std::shared_ptr<const Operations> graph_below(const Entry& e) {
    if (e.links.size() != 1) return nullptr;
    auto it = entries().find(e.links[0]);
    return it != entries().end() ? it->second.graph : nullptr;
}

// A graph's operations from its operations' entries; null when one is unknown. Mutex held.
std::shared_ptr<const Operations> graph_of(const Entry& e) {
    auto ops = std::make_shared<Operations>();
    for (cudnnBackendDescriptor_t d : e.links) {
        auto it = entries().find(d);
        if (it == entries().end() || it->second.operation == nullptr) return nullptr;
        ops->push_back(*it->second.operation);
    }
    return ops->empty() ? nullptr : ops;
}

void finalize_plan(cudnnBackendDescriptor_t plan) {
    std::shared_ptr<const Operations> graph;
    {
        std::lock_guard<std::mutex> lock(mutex);
        auto it = entries().find(plan);
        if (it != entries().end()) graph = graph_below(it->second);
    }
    auto summary = std::make_shared<PlanSummary>();
    summary->operations = graph != nullptr ? *graph : read_plan_graph(plan);
    read_plan_facts(plan, summary.get());
    if (summary->operations.empty()) return;
    finish_summary(summary.get());
    std::lock_guard<std::mutex> lock(mutex);
    entries()[plan].plan = std::move(summary);
}

void finalized(cudnnBackendDescriptor_t d) {
    cudnnBackendDescriptorType_t type{};
    {
        std::lock_guard<std::mutex> lock(mutex);
        auto it = entries().find(d);
        if (it == entries().end()) return;  // created before the collector loaded
        type = it->second.type;
        if (type == CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR) it->second.graph = graph_of(it->second);
        if (type == CUDNN_BACKEND_ENGINE_DESCRIPTOR || type == CUDNN_BACKEND_ENGINECFG_DESCRIPTOR) {
            if (auto below = graph_below(it->second); below != nullptr) it->second.graph = std::move(below);
        }
    }
    if (type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR) finalize_plan(d);
    if (!is_operation(type)) return;
    auto operation = std::make_shared<Operation>();
    if (!read_operation(type, d, operation.get())) return;
    std::lock_guard<std::mutex> lock(mutex);
    entries()[d].operation = std::move(operation);
}

// The engine configs a heuristic hands out run its graph.
void heuristic_results(cudnnBackendDescriptor_t heuristic, int64_t count, void* configs) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = entries().find(heuristic);
    if (it == entries().end()) return;
    std::shared_ptr<const Operations> graph = graph_below(it->second);
    if (graph == nullptr) return;
    for (int64_t i = 0; i < count; ++i) entries()[static_cast<cudnnBackendDescriptor_t*>(configs)[i]].graph = graph;
}

}  // namespace

std::shared_ptr<const PlanSummary> plan_summary(cudnnBackendDescriptor_t plan) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = entries().find(plan);
    return it != entries().end() ? it->second.plan : nullptr;
}

}  // namespace tbdprof::preload::cudnn_backend

using namespace tbdprof::preload;
namespace backend = tbdprof::preload::cudnn_backend;

extern "C" TBD_VISIBLE cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type,
                                                                  cudnnBackendDescriptor_t* descriptor) {
    static LibraryFunction<decltype(&::cudnnBackendCreateDescriptor)> real{"cudnnBackendCreateDescriptor"};
    auto fn = real.get();
    if (fn == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    const cudnnStatus_t status = fn(type, descriptor);
    if (status == CUDNN_STATUS_SUCCESS && descriptor != nullptr && backend::followed(type)) {
        std::lock_guard<std::mutex> lock(backend::mutex);
        backend::entries()[*descriptor] = backend::Entry{type, {}, nullptr, nullptr, nullptr};
    }
    return status;
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t descriptor) {
    static LibraryFunction<decltype(&::cudnnBackendDestroyDescriptor)> real{"cudnnBackendDestroyDescriptor"};
    auto fn = real.get();
    if (fn == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    {
        std::lock_guard<std::mutex> lock(backend::mutex);
        backend::entries().erase(descriptor);
    }
    return fn(descriptor);
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t descriptor,
                                                              cudnnBackendAttributeName_t name,
                                                              cudnnBackendAttributeType_t type, int64_t count,
                                                              const void* elements) {
    static LibraryFunction<decltype(&::cudnnBackendSetAttribute)> real{"cudnnBackendSetAttribute"};
    auto fn = real.get();
    if (fn == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    const cudnnStatus_t status = fn(descriptor, name, type, count, elements);
    if (status == CUDNN_STATUS_SUCCESS && type == CUDNN_TYPE_BACKEND_DESCRIPTOR && backend::is_link(name) &&
        elements != nullptr && count >= 0) {
        const auto* links = static_cast<const cudnnBackendDescriptor_t*>(elements);
        std::lock_guard<std::mutex> lock(backend::mutex);
        if (auto it = backend::entries().find(descriptor); it != backend::entries().end())
            it->second.links.assign(links, links + count);
    }
    return status;
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const descriptor,
                                                              cudnnBackendAttributeName_t name,
                                                              cudnnBackendAttributeType_t type, int64_t requested,
                                                              int64_t* count, void* elements) {
    static LibraryFunction<decltype(&::cudnnBackendGetAttribute)> real{"cudnnBackendGetAttribute"};
    auto fn = real.get();
    if (fn == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    const cudnnStatus_t status = fn(descriptor, name, type, requested, count, elements);
    if (status == CUDNN_STATUS_SUCCESS && name == CUDNN_ATTR_ENGINEHEUR_RESULTS && elements != nullptr &&
        count != nullptr) {
        backend::heuristic_results(descriptor, std::min(*count, requested), elements);
    }
    return status;
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t descriptor) {
    static LibraryFunction<decltype(&::cudnnBackendFinalize)> real{"cudnnBackendFinalize"};
    auto fn = real.get();
    if (fn == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    const cudnnStatus_t status = fn(descriptor);
    if (status == CUDNN_STATUS_SUCCESS) backend::finalized(descriptor);
    return status;
}
