// The subscriber part of CUPTI's Callback API. Real CUPTI allows one subscriber per process and refuses
// a second one with CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: that is how a tool learns that
// another one (torch.profiler, Nsight, a program tracing itself) holds CUPTI. The simulated driver
// does not report API calls to CUPTI, so callbacks are never delivered: enabling one is refused with
// CUPTI_ERROR_NOT_SUPPORTED rather than accepted and silently never called.
#include <cupti_callbacks.h>
#include <cupti_result.h>

#include <cstring>
#include <mutex>
#include <string>

#define TBDSIM_CUPTI_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

struct Subscriber {
    CUpti_CallbackFunc callback = nullptr;
    void* userdata = nullptr;
    std::string name;
};

std::mutex g_mutex;
Subscriber* g_subscriber = nullptr;  // the one subscriber, or null

bool is_current(CUpti_SubscriberHandle handle) {
    return handle != nullptr && reinterpret_cast<Subscriber*>(handle) == g_subscriber;
}

CUptiResult subscribe(CUpti_SubscriberHandle* out, CUpti_CallbackFunc callback, void* userdata,
                      CUpti_SubscriberParams* params) {
    if (out == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    if (params != nullptr && params->structSize == 0) return CUPTI_ERROR_INVALID_PARAMETER;
    std::lock_guard lock(g_mutex);
    if (g_subscriber != nullptr) {
        if (params != nullptr && params->oldSubscriberName != nullptr && params->oldSubscriberSize > 0) {
            std::string old = "CUPTI for " + (g_subscriber->name.empty() ? std::string("an unnamed subscriber")
                                                                          : g_subscriber->name);
            std::strncpy(params->oldSubscriberName, old.c_str(), params->oldSubscriberSize - 1);
            params->oldSubscriberName[params->oldSubscriberSize - 1] = '\0';
        }
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    }
    auto* created = new Subscriber{callback, userdata, {}};
    if (params != nullptr && params->subscriberName != nullptr)
        created->name.assign(params->subscriberName, strnlen(params->subscriberName, CUPTI_SUBSCRIBER_NAME_MAX_LEN));
    g_subscriber = created;
    *out = reinterpret_cast<CUpti_SubscriberHandle>(created);
    return CUPTI_SUCCESS;
}

CUptiResult enable_checked(uint32_t enable, CUpti_SubscriberHandle handle) {
    std::lock_guard lock(g_mutex);
    if (!is_current(handle)) return CUPTI_ERROR_INVALID_PARAMETER;
    return enable != 0 ? CUPTI_ERROR_NOT_SUPPORTED : CUPTI_SUCCESS;
}

}  // namespace

TBDSIM_CUPTI_EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                                               void* userdata) {
    return subscribe(subscriber, callback, userdata, nullptr);
}

TBDSIM_CUPTI_EXPORT CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                                                  void* userdata, CUpti_SubscriberParams* params) {
    return subscribe(subscriber, callback, userdata, params);
}

TBDSIM_CUPTI_EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber) {
    std::lock_guard lock(g_mutex);
    if (!is_current(subscriber)) return CUPTI_ERROR_INVALID_PARAMETER;
    delete g_subscriber;
    g_subscriber = nullptr;
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult cuptiGetCallbackState(uint32_t* enable, CUpti_SubscriberHandle subscriber,
                                                      CUpti_CallbackDomain domain, CUpti_CallbackId /*cbid*/) {
    if (enable == nullptr || domain <= CUPTI_CB_DOMAIN_INVALID || domain >= CUPTI_CB_DOMAIN_SIZE)
        return CUPTI_ERROR_INVALID_PARAMETER;
    std::lock_guard lock(g_mutex);
    if (!is_current(subscriber)) return CUPTI_ERROR_INVALID_PARAMETER;
    *enable = 0;  // nothing can be enabled (see the top of this file)
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                                    CUpti_CallbackDomain domain, CUpti_CallbackId /*cbid*/) {
    if (domain <= CUPTI_CB_DOMAIN_INVALID || domain >= CUPTI_CB_DOMAIN_SIZE) return CUPTI_ERROR_INVALID_PARAMETER;
    return enable_checked(enable, subscriber);
}

TBDSIM_CUPTI_EXPORT CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                                  CUpti_CallbackDomain domain) {
    if (domain <= CUPTI_CB_DOMAIN_INVALID || domain >= CUPTI_CB_DOMAIN_SIZE) return CUPTI_ERROR_INVALID_PARAMETER;
    return enable_checked(enable, subscriber);
}

TBDSIM_CUPTI_EXPORT CUptiResult cuptiEnableAllDomains(uint32_t enable, CUpti_SubscriberHandle subscriber) {
    return enable_checked(enable, subscriber);
}
